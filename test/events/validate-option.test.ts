// This file never imports src/validate.ts (vitest gives each test file its own module graph), so it
// sees the core as a bundle without the validators does: what a user meets after the move.
import { describe, expect, it, vi } from 'vitest';
import { constructEvent, constructEventSync, createReceiver, parseEvent, signSync, type EventValidators } from '../../src/index.js';
import { fixtureFor } from './fixtures.js';

const toggled = fixtureFor('app:scale-override:toggled');
const invalidToggled = toggled.text.replace(/"state": ?"(on|off)"/, '"state":"maybe"');
const FIX = /Add `import 'rack-webhooks\/validate';`.*`validate: validators`/;

function typeError(fn: () => unknown): TypeError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TypeError) return error;
    throw error;
  }
  throw new Error('expected a TypeError');
}

describe('validate: true before rack-webhooks/validate is loaded', () => {
  it('parseEvent throws a TypeError that gives the one-line fix, instead of skipping validation', () => {
    expect(invalidToggled).not.toBe(toggled.text);
    const error = typeError(() => parseEvent(invalidToggled, { validate: true }));
    expect(error.message).toMatch(/^validate: true needs the schema validators/);
    expect(error.message).toMatch(FIX);
    // Without validate, the same body parses: only the envelope and the integers are checked.
    expect(parseEvent(invalidToggled).action).toBe('app:scale-override:toggled');
  });

  it('createReceiver fails when it is created, not on the first delivery', () => {
    expect(typeError(() => createReceiver({ secrets: 'k', validate: true })).message).toMatch(FIX);
    expect(() => createReceiver({ secrets: 'k', validate: false })).not.toThrow();
  });

  it('constructEvent fails before verifying anything', async () => {
    const header = signSync(toggled.text, { secrets: 'k', timestamp: 1000 });
    expect(typeError(() => constructEventSync(toggled.text, header, { secrets: 'k', now: 1000, validate: true })).message).toMatch(FIX);
    // A wrong secret would be a 401; the configuration error comes first and is not one.
    expect(typeError(() => constructEventSync(toggled.text, header, { secrets: 'wrong', now: 1000, validate: true })).message).toMatch(FIX);
    await expect(constructEvent(toggled.text, header, { secrets: 'k', now: 1000, validate: true })).rejects.toThrow(FIX);
  });
});

describe('the validate option', () => {
  it('hands a set passed as `validate` each known event, and never an unknown one', () => {
    const assertValid = vi.fn();
    const set: EventValidators = { assertValid };
    parseEvent(toggled.text, { validate: set });
    expect(assertValid).toHaveBeenCalledTimes(1);
    expect(assertValid.mock.calls[0]?.[0]).toBe('app:scale-override:toggled');
    parseEvent('{"action":"app:future","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{}}', { validate: set });
    expect(assertValid).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['a string', 'yes', 'string'],
    ['a number', 1, 'number'],
    ['null', null, 'null'],
    ['an object that is not a validator set', {}, 'object'],
  ])('refuses %s with a TypeError', (_, value, got) => {
    const error = typeError(() => parseEvent(toggled.text, { validate: value as unknown as boolean }));
    expect(error.message).toBe(`validate must be true, false or \`validators\` from rack-webhooks/validate, got ${got}`);
    expect(typeError(() => createReceiver({ secrets: 'k', validate: value as unknown as boolean })).message).toBe(error.message);
  });

  it('importing rack-webhooks/validate registers the validators for `validate: true`', async () => {
    const { validators } = await import('../../src/validate.js');
    expect(Object.isFrozen(validators)).toBe(true);
    expect(() => parseEvent(invalidToggled, { validate: true })).toThrow(
      expect.objectContaining({ code: 'invalid_event', path: '/data/state' }),
    );
    expect(() => createReceiver({ secrets: 'k', validate: true })).not.toThrow();
  });
});
