// What deployed racks send (shared/spec/field-notes.md) is typed, validates and parses: every field
// the notes record, on every action, as the rack's own sender writes the body.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTEGER_FIELDS } from '../../src/generated/catalog.js';
import { WEBHOOK_ACTIONS, isKnownEvent, isOnCallEvent, isRoutineEvent, parseEvent } from '../../src/index.js';
import '../../src/validate.js'; // `validate: true` needs the validators registered
import { createTestEvent } from '../../src/testing/index.js';
import { FIELD_NOTES } from './field-notes.js';
import { fixtureFor } from './fixtures.js';

const schemaFields = (action: string): Record<string, { $ref?: string; type?: string }> =>
  JSON.parse(readFileSync(join(import.meta.dirname, '../../schemas/events', `${action.replaceAll(':', '.')}.schema.json`), 'utf8'))
    .properties.data.properties;

/** The body as a deployed rack's sender writes it: compact, `data` keys sorted, `<`, `>`, `&` escaped. */
function asRackSends(event: { action: string; status: string; timestamp: string; data: Record<string, unknown> }): string {
  const data = Object.fromEntries(Object.entries(event.data).sort(([a], [b]) => (a < b ? -1 : 1)));
  return JSON.stringify({ ...event, data }).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
}

const noted = Object.entries(FIELD_NOTES);

describe("the field notes' fields", () => {
  it('cover actions of the catalog only, and the catalog has the action the notes add', () => {
    for (const [action] of noted) expect(WEBHOOK_ACTIONS, action).toContain(action);
    expect(WEBHOOK_ACTIONS).toContain('release:agent-autoscale-ignored');
  });

  it.each(noted)('%s: each is a field of its schema, a string unless the spec types it as an integer', (action, fields) => {
    const schema = schemaFields(action);
    for (const field of fields) {
      expect(schema, `${action} data.${field}`).toHaveProperty(field);
      const integer = (INTEGER_FIELDS[action] ?? []).includes(field);
      expect(integer, `${action} data.${field}`).toBe(['dropped', 'cap', 'preserved_count', 'yaml_count_min'].includes(field));
    }
  });

  it.each(noted)('%s: its fixture carries every one (build:create sends message on failure only)', (action, fields) => {
    const { json } = fixtureFor(action);
    const expected = action === 'build:create' ? fields.filter((f) => f !== 'message') : fields;
    for (const field of expected) expect(json.data, `${action} data.${field}`).toHaveProperty(field);
  });

  it.each(WEBHOOK_ACTIONS.map((a) => [a] as const))('%s: every field filled, as the rack sends it, validates and parses', (action) => {
    const event = parseEvent(asRackSends(fixtureFor(action).json), { validate: true });
    expect(isKnownEvent(event)).toBe(true);
    for (const field of FIELD_NOTES[action] ?? []) {
      if (action === 'build:create' && field === 'message') continue;
      const value = (event.data as Record<string, unknown>)[field];
      expect(typeof value, `${action} data.${field}`).toBe((INTEGER_FIELDS[action] ?? []).includes(field) ? 'number' : 'string');
    }
  });

  it('build:create on failure: status error with message, as the notes say', () => {
    const failed = createTestEvent('build:create', { status: 'error', data: { message: 'exit status 1' } });
    delete (failed.data as Record<string, unknown>)['release_id'];
    expect(parseEvent(asRackSends(failed), { validate: true })).toMatchObject({ status: 'error', data: { message: 'exit status 1' } });
  });

  it('the two :failed events of one tick the notes describe both validate and say different things', () => {
    const tick = 'tick-2026-04-22T02:00:00Z-1c5abd65dab342e2a27f50d3ab325e4d';
    const partial = createTestEvent('app:budget:auto-shutdown:failed', {
      timestamp: '2026-04-22T02:05:41.927361054Z',
      data: { tick_id: tick, failed_services: 'worker', partial_state: '1', failed_at: '2026-04-22T02:05:41Z' },
    });
    const restore = createTestEvent('app:budget:auto-shutdown:failed', {
      timestamp: '2026-04-28T08:05:40.5Z',
      data: { tick_id: tick, failed_services: 'web', partial_state: '0', failed_at: '2026-04-28T08:05:40Z' },
    });
    const [a, b] = [partial, restore].map((e) => parseEvent(asRackSends(e), { validate: true }).data);
    expect(a).toMatchObject({ tick_id: tick, partial_state: '1', failed_services: 'worker' });
    expect(b).toMatchObject({ tick_id: tick, partial_state: '0', failed_services: 'web' });
  });

  it('the known values the notes give validate, and so does a value they do not (a newer rack)', () => {
    for (const [action, field, values] of [
      ['app:budget:reset', 'reset_kind', ['breaker-clear', 'period-reset', 'manual']],
      ['app:budget:auto-shutdown:failed', 'partial_state', ['1', '0', '2']],
      ['app:budget:breaker-cleared', 'reason', ['cap-raised', 'cap-removed']],
    ] as const) {
      for (const value of values) {
        const body = asRackSends({ ...fixtureFor(action).json, data: { ...fixtureFor(action).json.data, [field]: value } });
        expect(parseEvent(body, { validate: true }).data, `${action} ${field}=${value}`).toMatchObject({ [field]: value });
      }
    }
  });
});

describe('release:agent-autoscale-ignored', () => {
  it('parses as the notes record it and belongs to no filtering group', () => {
    const body =
      '{"action":"release:agent-autoscale-ignored","data":{"actor":"system","app":"billing-api","rack":"example-rack",' +
      '"release":"RKDVNPQHSTE","service":"log-shipper"},"status":"success","timestamp":"2026-04-27T10:01:31.020118437Z"}';
    const event = parseEvent(body, { validate: true });
    expect(isKnownEvent(event) && event.action === 'release:agent-autoscale-ignored').toBe(true);
    expect(event.data).toEqual({
      actor: 'system',
      app: 'billing-api',
      rack: 'example-rack',
      release: 'RKDVNPQHSTE',
      service: 'log-shipper',
    });
    // A configuration advisory like release:autoscale-disabled: not routine noise to drop, nothing to page for.
    expect(isRoutineEvent(event)).toBe(false);
    expect(isOnCallEvent(event)).toBe(false);
  });

  it('takes an actor other than "system", since the notes do not fix it', () => {
    const event = createTestEvent('release:agent-autoscale-ignored', { data: { actor: 'dana@example.com' } });
    expect(parseEvent(asRackSends(event), { validate: true }).data).toMatchObject({ actor: 'dana@example.com' });
  });
});
