import { describe, expect, it } from 'vitest';
import { INTEGER_FIELDS } from '../../src/generated/catalog.js';
import { WEBHOOK_ACTIONS, isKnownEvent, parseEvent, signSync, constructEventSync } from '../../src/index.js';
import { validators } from '../../src/validate.js';
import { fixtures } from './fixtures.js';

describe('the fixture set', () => {
  it('has exactly one realistic payload per action of the catalog', () => {
    expect(WEBHOOK_ACTIONS).toHaveLength(36);
    expect(fixtures.map((f) => f.json.action).sort()).toEqual([...WEBHOOK_ACTIONS].sort());
    for (const { name, json } of fixtures) expect(name).toBe(`${json.action.replaceAll(':', '.')}.json`);
  });

  it.each(fixtures.map((f) => [f.json.action, f] as const))('%s is shaped as racks send it', (_action, { json }) => {
    for (const [field, value] of Object.entries(json.data)) expect(typeof value, `data.${field}`).toBe('string');
    expect(json.data['rack']).toBe('example-rack');
    expect(json.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
    if (json.data['tick_id'] !== undefined) {
      expect(json.data['tick_id']).toMatch(/^tick-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z-[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    }
  });

  it.each(fixtures.map((f) => [f.json.action, f] as const))('%s validates and parses to its exact known type', (action, { text }) => {
    const event = parseEvent(text, { validate: true });
    expect(isKnownEvent(event)).toBe(true);
    expect(event.action).toBe(action);
    for (const field of INTEGER_FIELDS[action] ?? []) {
      expect(typeof (event.data as Record<string, unknown>)[field], field).toBe('number');
    }
  });

  it('every fixture survives sign, verify and parse byte for byte', () => {
    for (const { text } of fixtures) {
      const header = signSync(text, { secrets: 'k', timestamp: 1_777_285_800 });
      const event = constructEventSync(Buffer.from(text), header, { secrets: 'k', now: 1_777_285_800, validate: validators });
      expect(event.action).toBe(JSON.parse(text).action);
    }
  });
});
