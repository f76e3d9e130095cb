import { describe, expect, it } from 'vitest';
import { appOf, errorType } from '../../src/telemetry/conventions.js';

/**
 * `error.type` and `rack_webhooks.app` go to whatever backend the application exports to: they
 * carry a code, a class name or the event's own app, never a message (which may quote a body).
 */
describe('telemetry attribute values', () => {
  it('errorType: the SDK code, else the class name, else _OTHER; never a message', () => {
    expect(errorType(Object.assign(new Error('secret body text'), { code: 'signature_mismatch' }))).toBe('signature_mismatch');
    expect(errorType(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe('Error');
    expect(errorType(new TypeError('secret body text'))).toBe('TypeError');
    const renamed = Object.assign(new Error('x'), { name: 'body: {"app":"a"}' });
    expect(errorType(renamed)).toBe('_OTHER');
    expect(errorType('a thrown string with a body')).toBe('_OTHER');
    expect(errorType(null)).toBe('_OTHER');
    expect(errorType(undefined)).toBe('_OTHER');
    expect(errorType({ code: 42 })).toBe('_OTHER');
  });

  it("appOf: the event's own data.app when it is a string, else nothing", () => {
    expect(appOf({ app: 'billing-api' })).toBe('billing-api');
    expect(appOf({ app: 7 })).toBeUndefined();
    expect(appOf({})).toBeUndefined();
    expect(appOf(null)).toBeUndefined();
    expect(appOf(undefined)).toBeUndefined();
  });
});
