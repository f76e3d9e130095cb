import { describe, expect, it } from 'vitest';
import {
  WebhookPayloadError,
  WebhookVerificationError,
  constructEvent,
  constructEventSync,
  isKnownEvent,
  parseEvent,
  signSync,
  type AnyWebhookEvent,
} from '../../src/index.js';
import { validators } from '../../src/validate.js'; // registers the validators: `validate: true` works below
import { fixtureFor } from './fixtures.js';

function payloadError(fn: () => unknown): WebhookPayloadError {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookPayloadError) return error;
    throw error;
  }
  throw new Error('expected a WebhookPayloadError');
}

const truncated = fixtureFor('app:budget:per-service-truncated');
const toggled = fixtureFor('app:scale-override:toggled');
const cancelled = fixtureFor('app:budget:auto-shutdown:cancelled');
const fired = fixtureFor('app:budget:auto-shutdown:fired');
const withData = (base: { json: object }, patch: Record<string, unknown>, top: Record<string, unknown> = {}) => {
  const json = structuredClone(base.json) as { data: Record<string, unknown> };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) delete json.data[key];
    else json.data[key] = value;
  }
  return JSON.stringify({ ...json, ...top });
};

describe('parseEvent input forms', () => {
  const text = truncated.text;
  it.each([
    ['a string', text],
    ['a Buffer', Buffer.from(text)],
    ['a Uint8Array', new Uint8Array(Buffer.from(text))],
    ['an ArrayBuffer', new Uint8Array(Buffer.from(text)).buffer],
    ['bytes with a UTF-8 BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])],
    ['a string with a BOM', `\ufeff${text}`],
  ])('accepts %s', (_, input) => {
    const event = parseEvent(input);
    expect(event.action).toBe('app:budget:per-service-truncated');
    expect(event.data).toMatchObject({ dropped: 3, cap: 200 });
  });

  it('accepts an already parsed value without mutating it', () => {
    const stored = JSON.parse(text);
    const before = structuredClone(stored);
    const event = parseEvent(stored, { validate: true });
    expect(stored).toEqual(before);
    expect((event.data as Record<string, unknown>)['dropped']).toBe(3);
  });
});

describe('numeric strings', () => {
  it('hands integer fields over as numbers and keeps money as strings', () => {
    const honored = parseEvent(fixtureFor('app:scale-override:honored').text, { validate: true });
    if (honored.action !== 'app:scale-override:honored') throw new Error('narrowing');
    expect(typeof (honored.data as Record<string, unknown>)['preserved_count']).toBe('number');
    const event = parseEvent(fired.text);
    expect(typeof (event.data as Record<string, unknown>)['cap_usd']).toBe('string');
  });

  it('accepts a JSON number for an integer field', () => {
    expect(parseEvent(withData(truncated, { dropped: 7 }), { validate: true }).data).toMatchObject({ dropped: 7 });
  });

  it.each(['3.5', '', 'three', '1e3', '99999999999999999999'])('refuses %j for an integer field, even without validate', (value) => {
    for (const validate of [false, true]) {
      const error = payloadError(() => parseEvent(withData(truncated, { dropped: value }), { validate }));
      expect(error).toMatchObject({
        code: 'invalid_event',
        path: '/data/dropped',
        status: 400,
        action: 'app:budget:per-service-truncated',
      });
    }
  });
});

describe('invalid JSON and envelopes', () => {
  it('invalid_json never quotes the body', () => {
    const error = payloadError(() => parseEvent('{"action":"app:create","secret-ish":'));
    expect(error.code).toBe('invalid_json');
    expect(error.status).toBe(400);
    expect(error.message).not.toContain('secret-ish');
  });

  it.each([
    ['an array', '[]', ''],
    ['null', 'null', ''],
    ['a number', '42', ''],
    ['no action', '{"status":"success","timestamp":"t","data":{}}', '/action'],
    ['a numeric action', '{"action":5,"status":"success","timestamp":"t","data":{}}', '/action'],
    ['no status', '{"action":"x:y","timestamp":"t","data":{}}', '/status'],
    ['no timestamp', '{"action":"x:y","status":"success","data":{}}', '/timestamp'],
    ['data as a string', '{"action":"x:y","status":"success","timestamp":"t","data":"{}"}', '/data'],
  ])('rejects %s with invalid_event at the right path', (_, body, path) => {
    const error = payloadError(() => parseEvent(body));
    expect(error).toMatchObject({ code: 'invalid_event', path });
  });
});

describe("unknown actions and fields (the spec's rule 5)", () => {
  const future =
    '{"action":"app:budget:forecast","status":"projected","timestamp":"2027-01-01T00:00:00Z","data":{"rack":"r","new_field":"x"}}';
  it('an unknown action parses, with validate too, and isKnownEvent says so', () => {
    for (const validate of [false, true]) {
      const event = parseEvent(future, { validate });
      expect(isKnownEvent(event)).toBe(false);
      expect(event.data).toEqual({ rack: 'r', new_field: 'x' });
    }
  });

  // The action is the sender's text: a name that Object.prototype also has once reached an object
  // lookup and crashed with a TypeError instead of parsing as unknown.
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])(
    'an action named %s parses as unknown, with validate too',
    (action) => {
      for (const validate of [false, true]) {
        const event = parseEvent(JSON.stringify({ action, status: 'success', timestamp: '2026-04-27T10:30:00Z', data: { rack: 'r' } }), {
          validate,
        });
        expect(event.action).toBe(action);
        expect(isKnownEvent(event)).toBe(false);
        expect(event.data).toEqual({ rack: 'r' });
      }
    },
  );

  it('names a catalog action in an envelope error, never an unknown one, which stays on .action', () => {
    const hostile = `x:${'\u001b[31m'.repeat(2000)}\n`;
    const error = payloadError(() => parseEvent(JSON.stringify({ action: hostile, status: 1, timestamp: 't', data: {} })));
    expect(error.message).toBe('Invalid webhook event: /status must be a string.');
    expect(error.action).toBe(hostile);
    const known = payloadError(() => parseEvent(JSON.stringify({ action: 'app:create', status: 1, timestamp: 't', data: {} })));
    expect(known.message).toBe('Invalid app:create event: /status must be a string.');
  });

  it('unknown fields on a known action are kept and pass validation', () => {
    const event = parseEvent(withData(toggled, { brand_new: 'yes' }, { extra_top: 1, status: 'deferred' }), { validate: true });
    expect(isKnownEvent(event)).toBe(true);
    expect(event.data).toMatchObject({ brand_new: 'yes' });
    expect(event.status).toBe('deferred');
  });

  it('a cancel_reason from a newer rack passes validation and reaches the receiver', () => {
    const event = parseEvent(withData(cancelled, { cancel_reason: 'budget-migrated' }), { validate: true });
    expect((event.data as Record<string, unknown>)['cancel_reason']).toBe('budget-migrated');
  });
});

describe('validate: true', () => {
  it.each([
    ['state outside on/off', toggled, { state: 'maybe' }, '/data/state', /must be one of "on", "off"/],
    ['a missing required field', toggled, { service: undefined }, '/data/service', /is required but missing/],
    ['a non-system actor on a tick event', fired, { actor: 'ops@example.com' }, '/data/actor', /must be "system"/],
    ['a missing tick_id on :fired', fired, { tick_id: undefined }, '/data/tick_id', /is required/],
    ['a malformed tick_id', fired, { tick_id: 'tick-x' }, '/data/tick_id', /expected format/],
    ['a number where a string is due', toggled, { service: 5 }, '/data/service', /must be a string/],
    ['money that is not a decimal', fired, { cap_usd: '$100' }, '/data/cap_usd', /expected format/],
  ])('rejects %s with the failing path', (_, base, patch, path, message) => {
    const error = payloadError(() => parseEvent(withData(base, patch), { validate: true }));
    expect(error.code).toBe('invalid_event');
    expect(error.path).toBe(path);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('ops@example.com');
    expect(() => parseEvent(withData(base, patch))).not.toThrow();
  });

  it('requires data.message when build:create reports an error', () => {
    const build = fixtureFor('build:create');
    const error = payloadError(() => parseEvent(JSON.stringify({ ...build.json, status: 'error' }), { validate: true }));
    expect(error.path).toBe('/data/message');
    expect(parseEvent(withData(build, { message: 'exit 1' }, { status: 'error' }), { validate: true }).status).toBe('error');
  });

  it('enforces the fixed status of release:promote and an RFC 3339 timestamp', () => {
    const promote = fixtureFor('release:promote');
    expect(payloadError(() => parseEvent(JSON.stringify({ ...promote.json, status: 'success' }), { validate: true })).path).toBe('/status');
    expect(
      payloadError(() => parseEvent(JSON.stringify({ ...promote.json, timestamp: '2026-04-27 10:30' }), { validate: true })).path,
    ).toBe('/timestamp');
  });

  it('`validate: validators` (the set passed explicitly) checks exactly as `validate: true` does', () => {
    const bad = withData(toggled, { state: 'maybe' });
    const explicit = payloadError(() => parseEvent(bad, { validate: validators }));
    const registered = payloadError(() => parseEvent(bad, { validate: true }));
    expect(explicit.code).toBe('invalid_event');
    expect(explicit.path).toBe('/data/state');
    expect(explicit.message).toBe(registered.message);
    expect(parseEvent(toggled.text, { validate: validators })).toEqual(parseEvent(toggled.text, { validate: true }));
  });
});

describe('constructEvent', () => {
  const text = fired.text;
  const header = signSync(text, { secrets: 'key', timestamp: 1000 });
  it('verifies then parses, sync and async', async () => {
    const sync = constructEventSync(text, header, { secrets: 'key', now: 1000, validate: true });
    const asyncEvent: AnyWebhookEvent = await constructEvent(text, header, { secrets: 'key', now: 1000 });
    expect(sync).toEqual(asyncEvent);
    expect(sync.action).toBe('app:budget:auto-shutdown:fired');
  });
  it('never parses a body whose signature fails', async () => {
    await expect(constructEvent('not json', header, { secrets: 'key', now: 1000 })).rejects.toBeInstanceOf(WebhookVerificationError);
    expect(() => constructEventSync(text, header, { secrets: 'other', now: 1000 })).toThrow(WebhookVerificationError);
  });
  it('reports a bad body after a good signature as WebhookPayloadError', () => {
    const body = '{"action":';
    expect(
      payloadError(() => constructEventSync(body, signSync(body, { secrets: 'key', timestamp: 1000 }), { secrets: 'key', now: 1000 })).code,
    ).toBe('invalid_json');
  });
});
