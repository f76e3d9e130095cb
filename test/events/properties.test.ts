import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_ACTIONS, WebhookPayloadError, parseEvent } from '../../src/index.js';
import '../../src/validate.js'; // `validate: true` needs the validators registered
import { fixtures } from './fixtures.js';

function parsesOrRefuses(input: string | object, validate: boolean) {
  try {
    const event = parseEvent(input, { validate });
    expect(typeof event.action).toBe('string');
    expect(typeof event.data).toBe('object');
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookPayloadError);
  }
}

describe('parseEvent on any input gives an event or a WebhookPayloadError, nothing else', () => {
  it('arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.boolean(), (text, validate) => parsesOrRefuses(text, validate)),
      { numRuns: 2000 },
    );
  });

  it('arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.boolean(), (value, validate) => parsesOrRefuses(JSON.stringify(value), validate)),
      { numRuns: 1000 },
    );
  });

  it('envelopes of every known action, of prototype-member names and of arbitrary actions, with arbitrary data', () => {
    const data = fc.dictionary(
      fc.oneof(
        fc.constantFrom(
          'app',
          'rack',
          'actor',
          'tick_id',
          'state',
          'service',
          'dropped',
          'cap',
          'cancel_reason',
          'preserved_count',
          'yaml_count_min',
        ),
        fc.string(),
      ),
      fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.double()),
    );
    fc.assert(
      // Object.prototype's member names: the action is the sender's text and must never reach a plain object lookup.
      fc.property(
        fc.oneof(fc.constantFrom(...WEBHOOK_ACTIONS), fc.constantFrom(...Object.getOwnPropertyNames(Object.prototype)), fc.string()),
        fc.string(),
        fc.string(),
        data,
        fc.boolean(),
        (action, status, timestamp, d, validate) => parsesOrRefuses({ action, status, timestamp, data: d }, validate),
      ),
      { numRuns: 2000 },
    );
  });

  it('fixtures with one data field replaced by an arbitrary JSON value', () => {
    fc.assert(
      fc.property(fc.constantFrom(...fixtures), fc.nat(), fc.jsonValue({ maxDepth: 2 }), fc.boolean(), (fixture, pick, value, validate) => {
        const json = structuredClone(fixture.json);
        const keys = Object.keys(json.data);
        json.data[keys[pick % keys.length]!] = value;
        parsesOrRefuses(JSON.stringify(json), validate);
      }),
      { numRuns: 2000 },
    );
  });
});
