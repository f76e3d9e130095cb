// createTestEvent checks its overrides at run time, as the types do at compile time: an event no
// rack would send is a TypeError naming the action and the field, never a test that passes on it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventFromFlags } from '../../src/cli/event-source.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { ACTION_FIELDS } from '../../src/generated/fields.js';
import { WEBHOOK_ACTIONS, parseEvent, type WebhookAction } from '../../src/index.js';
import '../../src/validate.js'; // `validate: true` needs the validators registered
import { createTestEvent } from '../../src/testing/index.js';

/** createTestEvent as plain JavaScript calls it: no types to stop anything. */
const untyped = createTestEvent as (action: string, overrides?: unknown) => { status: string; data: Record<string, unknown> };
const message = (action: string, overrides: unknown) => {
  try {
    untyped(action, overrides);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as TypeError).message;
  }
  throw new Error('createTestEvent accepted it');
};

describe('createTestEvent refuses, naming the action and the field', () => {
  it('a data field the action does not have, with the closest known field and the way to send it anyway', () => {
    expect(message('app:budget:auto-shutdown:failed', { data: { failed_service: 'web' } })).toBe(
      'createTestEvent("app:budget:auto-shutdown:failed"): data.failed_service is not a field of app:budget:auto-shutdown:failed ' +
        '(did you mean "failed_services"?). To send a field this action does not have (as a newer rack might), pass it in extraData.',
    );
    expect(message('app:scale-override:toggled', { data: { cancel_reason: 'cap-raised' } })).toBe(
      'createTestEvent("app:scale-override:toggled"): data.cancel_reason is not a field of app:scale-override:toggled. ' +
        'To send a field this action does not have (as a newer rack might), pass it in extraData.',
    );
  });

  it('a value that is not a string, as no rack sends one', () => {
    expect(message('app:budget:per-service-truncated', { data: { dropped: 3 } })).toBe(
      'createTestEvent("app:budget:per-service-truncated"): data.dropped must be a string, as the rack sends every data value; got number 3: pass "3"',
    );
    expect(message('app:budget:auto-shutdown:failed', { data: { retry_count: 5 } })).toMatch(
      /data\.retry_count must be a string.*pass "5"$/,
    );
    expect(message('app:budget:auto-shutdown:dismissed', { data: { idempotent: true } })).toMatch(
      /data\.idempotent .*got boolean true: pass "true"$/,
    );
    expect(message('app:create', { data: { name: { first: 'x' } } })).toMatch(/data\.name must be a string.*got an object$/);
    expect(message('app:create', { data: { name: null } })).toMatch(/data\.name must be a string.*got null$/);
  });

  it('an integer field that is not a decimal integer string', () => {
    for (const value of ['three', '3.5', '', ' 3']) {
      expect(message('app:scale-override:honored', { data: { preserved_count: value } })).toBe(
        `createTestEvent("app:scale-override:honored"): data.preserved_count must be a decimal integer string such as "3" (the spec types it as an integer); got ${JSON.stringify(value)}`,
      );
    }
  });

  it('a value outside a set the schema fixes', () => {
    expect(message('app:scale-override:toggled', { data: { state: 'maybe' } })).toBe(
      'createTestEvent("app:scale-override:toggled"): data.state must be one of "on", "off"; got "maybe"',
    );
    expect(message('app:budget:auto-shutdown:fired', { data: { actor: 'ops@example.com' } })).toMatch(
      /data\.actor must be one of "system"/,
    );
    expect(message('release:promote', { status: 'success' })).toBe(
      'createTestEvent("release:promote"): status "success" is not one release:promote can have ("start")',
    );
    expect(message('build:create', { status: 'skipped' })).toMatch(
      /status "skipped" is not one build:create can have \("success", "error"\)/,
    );
  });

  it('an unknown option, a status or timestamp that is not a string, overrides that are not an object', () => {
    expect(message('app:budget:cap', { stauts: 'success' })).toBe(
      'createTestEvent("app:budget:cap"): unknown option "stauts" (did you mean "status"?); it takes status, timestamp, data, extraData',
    );
    expect(message('app:budget:cap', { payload: {} })).toBe(
      'createTestEvent("app:budget:cap"): unknown option "payload"; it takes status, timestamp, data, extraData',
    );
    expect(message('app:budget:cap', { status: 200 })).toMatch(/\): status must be a string; got number 200$/);
    expect(message('app:budget:cap', { timestamp: new Date(0) })).toMatch(/\): timestamp must be a string; got an object$/);
    expect(message('app:budget:cap', null)).toMatch(/\): overrides must be an object of status, timestamp, data, extraData; got null$/);
    expect(message('app:budget:cap', { data: ['app'] })).toMatch(/\): data must be an object of app:budget:cap's fields; got an array$/);
  });

  it('an unknown action, with the closest known one', () => {
    expect(message('app:crate', {})).toBe('createTestEvent: unknown action "app:crate" (did you mean "app:create"?)');
    expect(message('deploy', {})).toBe('createTestEvent: unknown action "deploy"');
  });

  it('any name that is not a field of the action (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...WEBHOOK_ACTIONS), fc.string({ minLength: 1, maxLength: 30 }), (action, field) => {
        fc.pre(!Object.hasOwn(ACTION_FIELDS[action]!.data, field) && field !== '__proto__');
        expect(message(action, { data: { [field]: 'x' } })).toContain(`data.${field} is not a field of ${action}`);
      }),
    );
  });
});

describe('createTestEvent accepts what a rack may send', () => {
  it('any string in a field of free text or of open known values, and the event still validates (property)', () => {
    const openFields = WEBHOOK_ACTIONS.flatMap((action) =>
      Object.entries(ACTION_FIELDS[action]!.data)
        .filter(([field, kind]) => kind === 'string' && field !== 'tick_id' && !/_usd$|^(app|rack|actor)$/.test(field))
        .map(([field]) => [action, field] as const),
    );
    fc.assert(
      fc.property(fc.constantFrom(...openFields), fc.string({ maxLength: 40 }), ([action, field], value) => {
        const event = untyped(action, { data: { [field]: value } });
        expect(event.data[field]).toBe(value);
        expect(parseEvent(JSON.stringify(event), { validate: true }).data).toMatchObject({ [field]: value });
      }),
    );
  });

  it('values the field notes do not list, where the schema keeps the set open', () => {
    for (const [action, field, value] of [
      ['app:budget:auto-shutdown:failed', 'partial_state', '2'],
      ['app:budget:reset', 'reset_kind', 'manual'],
      ['app:budget:breaker-cleared', 'reason', 'cap-removed'],
      ['app:budget:auto-shutdown:cancelled', 'cancel_reason', 'added-by-a-newer-rack'],
    ] as const) {
      const event = untyped(action, { data: { [field]: value } });
      expect(parseEvent(JSON.stringify(event), { validate: true }).data).toMatchObject({ [field]: value });
    }
  });

  it('any status where the action does not fix it', () => {
    expect(untyped('release:create', { status: 'cancelled' }).status).toBe('cancelled');
    expect(untyped('release:agent-autoscale-ignored', { status: 'warning' }).status).toBe('warning');
  });

  it('undefined as "not given": the realistic default stays', () => {
    const event = untyped('app:budget:cap', { status: undefined, timestamp: undefined, data: { app: undefined }, extraData: undefined });
    expect(event).toMatchObject({ status: 'success', data: { app: 'billing-api', rack: 'example-rack' } });
  });
});

describe('extraData: fields the action does not have, to test that a receiver ignores them', () => {
  it('are sent as given and parse as fields of the event, with or without validation', () => {
    const event = createTestEvent('app:budget:cap', { data: { app: 'checkout' }, extraData: { region: 'eu-west-1' } });
    expect(event.data).toMatchObject({ app: 'checkout', region: 'eu-west-1' });
    for (const validate of [false, true])
      expect(parseEvent(JSON.stringify(event), { validate }).data).toMatchObject({ region: 'eu-west-1' });
  });

  it('refuse a field the action has (it belongs in data, where it is checked) and a value that is not a string', () => {
    expect(message('app:scale-override:toggled', { extraData: { state: 'maybe' } })).toBe(
      'createTestEvent("app:scale-override:toggled"): extraData.state is a field of app:scale-override:toggled: pass it in data, where its value is checked',
    );
    expect(message('app:budget:cap', { extraData: { region: 1 } })).toMatch(/extraData\.region must be a string.*pass "1"$/);
    expect(message('app:budget:cap', { extraData: 'region=eu' })).toMatch(
      /extraData must be an object of fields app:budget:cap does not have/,
    );
  });
});

describe('rack-webhooks send --set', () => {
  const notes: string[] = [];
  const fromFlags = (action: string, ...sets: string[]) => eventFromFlags(action, sets, (line) => notes.push(line)) as Record<string, any>;

  it('sends a field the action does not have, with a note', () => {
    const event = fromFlags('app:budget:cap', 'data.typo=x', 'data.app=checkout');
    expect(event['data']).toMatchObject({ typo: 'x', app: 'checkout' });
    expect(notes).toEqual(['note: data.typo is not a field of app:budget:cap; sending it anyway']);
  });

  it('refuses a value the action cannot have, as a usage error that says why', () => {
    expect(() => fromFlags('release:promote', 'status=success')).toThrow(
      new UsageError('--set: createTestEvent("release:promote"): status "success" is not one release:promote can have ("start")'),
    );
    expect(() => fromFlags('app:budget:per-service-truncated', 'data.dropped=many')).toThrow(UsageError);
  });
});

it('every action of the catalog has its field kinds', () => {
  expect(Object.keys(ACTION_FIELDS).sort()).toEqual([...WEBHOOK_ACTIONS].sort());
  const honored: WebhookAction = 'app:scale-override:honored';
  expect(ACTION_FIELDS[honored]!.data).toMatchObject({ preserved_count: 'integer', yaml_count_min: 'integer', actor: ['system'] });
});
