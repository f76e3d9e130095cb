import { describe, expect, it } from 'vitest';
import {
  WebhookVerificationError,
  isWebhookVerificationError,
  parseSignatureHeader,
  sign,
  signSync,
  verify,
  verifySync,
} from '../../src/index.js';
import { MAX_HEADER_LENGTH } from '../../src/signature/limits.js';

const SECRET = 'super-secret-key-value';
const BODY =
  '{"action":"app:budget:cap","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{"rack":"r","app":"a","actor":"system","note":"confidential-body-text"}}';
const NOW = 1_777_285_800;

function caught(fn: () => unknown): WebhookVerificationError {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error;
    throw error;
  }
  throw new Error('expected a WebhookVerificationError');
}

describe('error messages never leak', () => {
  const good = signSync(BODY, { secrets: SECRET, timestamp: NOW });
  const forged = signSync(BODY, { secrets: 'attacker', timestamp: NOW });
  const cases: Array<[string, () => unknown]> = [
    ['mismatch', () => verifySync(BODY, forged, { secrets: SECRET, now: NOW })],
    ['mismatch with two secrets', () => verifySync(BODY, forged, { secrets: [SECRET, `${SECRET}2`], now: NOW })],
    ['stale', () => verifySync(BODY, good, { secrets: SECRET, now: NOW + 1000 })],
    ['future', () => verifySync(BODY, good, { secrets: SECRET, now: NOW - 1000 })],
    ['whitespace hint', () => verifySync(BODY, good, { secrets: [`${SECRET}\n`], now: NOW })],
    ['hex hint', () => verifySync(BODY, good, { secrets: SECRET, secretEncoding: 'hex', now: NOW })],
    ['malformed v1', () => verifySync(BODY, `t=${NOW},v1=${parseSignatureHeader(good).signatures[0]!.slice(1)}`, { secrets: SECRET })],
    ['parsed payload', () => verifySync(JSON.parse(BODY), good, { secrets: SECRET })],
  ];
  it.each(cases)('%s: no secret, signature or body in message', (_, fn) => {
    const error = caught(fn);
    const text = `${error.message} ${JSON.stringify(error)} ${String(error.stack)}`;
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('attacker');
    expect(text).not.toContain('confidential-body-text');
    for (const signature of [...parseSignatureHeader(good).signatures, ...parseSignatureHeader(forged).signatures]) {
      expect(text).not.toContain(signature);
      expect(text).not.toContain(signature.slice(0, 16));
    }
  });
});

describe('error details a receiver relies on', () => {
  const header = signSync(BODY, { secrets: SECRET, timestamp: NOW });

  it('says which way and by how many seconds the timestamp is off', () => {
    const old = caught(() => verifySync(BODY, header, { secrets: SECRET, now: NOW + 412 }));
    expect(old).toMatchObject({ code: 'timestamp_too_old', status: 401, skewSeconds: 412, tolerance: 300, timestamp: NOW });
    expect(old.message).toMatch(/412 s older than now; tolerance is 300 s/);
    const future = caught(() => verifySync(BODY, header, { secrets: SECRET, now: NOW - 400 }));
    expect(future).toMatchObject({ code: 'timestamp_too_new', skewSeconds: 400 });
    expect(future.message).toMatch(/400 s in the future/);
  });

  it('hints at whitespace around a secret when trimming would verify', () => {
    const error = caught(() => verifySync(BODY, header, { secrets: ['other', ` ${SECRET}\n`], now: NOW }));
    expect(error.code).toBe('signature_mismatch');
    expect(error.message).toMatch(/Secret #2 has whitespace at its start or end/);
  });

  it('notes whitespace even when trimming would not verify', () => {
    const error = caught(() => verifySync(BODY, header, { secrets: ['wrong\n'], now: NOW }));
    expect(error.message).toMatch(/secret #1 has whitespace/);
  });

  it('hints at the quotes of a .env line left around a secret, in either encoding', () => {
    for (const secrets of [`"${SECRET}"`, ['other', `'${SECRET}'`]]) {
      const error = caught(() => verifySync(BODY, header, { secrets, now: NOW }));
      expect(error.code).toBe('signature_mismatch');
      expect(error.message).toMatch(
        /Secret #\d is in quotes \(a \.env line\?\); without them the signature verifies\. Remove the quotes\./,
      );
    }
    const hexKey = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const hexHeader = signSync(BODY, { secrets: hexKey, secretEncoding: 'hex', timestamp: NOW });
    expect(caught(() => verifySync(BODY, hexHeader, { secrets: `"${hexKey}"`, now: NOW })).message).toMatch(/Secret #1 is in quotes/);
    expect(caught(() => verifySync(BODY, header, { secrets: '"wrong"', now: NOW })).message).toMatch(
      /Note: secret #1 has whitespace or quotes at its start or end\./,
    );
  });

  it('trims each key of the comma-separated string form, as the rack does', () => {
    expect(verifySync(BODY, header, { secrets: ` old , ${SECRET}\n`, now: NOW }).secretIndex).toBe(1);
  });

  it('explains payload_not_raw with the fix for Express, Fastify and Next.js', () => {
    for (const payload of [JSON.parse(BODY), null, undefined, [1], 42]) {
      const error = caught(() => verifySync(payload, header, { secrets: SECRET }));
      expect(error).toMatchObject({ code: 'payload_not_raw', status: 500 });
      expect(error.message).toMatch(/Express: .*express\.raw/);
      expect(error.message).toMatch(/Fastify: .*parseAs: "buffer"/);
      expect(error.message).toMatch(/Next\.js .*request\.text\(\)/);
    }
  });

  it('checks the signature before the time window', () => {
    const stale = signSync(BODY, { secrets: 'someone-else', timestamp: NOW - 10_000 });
    expect(caught(() => verifySync(BODY, stale, { secrets: SECRET, now: NOW })).code).toBe('signature_mismatch');
  });

  it('gives 401 for request problems and 500 for receiver misconfiguration', () => {
    expect(caught(() => verifySync(BODY, undefined, { secrets: SECRET })).status).toBe(401);
    expect(caught(() => verifySync(BODY, header, { secrets: [] })).status).toBe(500);
    expect(caught(() => verifySync(BODY, header, { secrets: 'zz', secretEncoding: 'hex' })).status).toBe(500);
  });

  it('mentions the unsigned-delivery causes on missing_header', () => {
    const error = caught(() => verifySync(BODY, [], { secrets: SECRET }));
    expect(error.code).toBe('missing_header');
    expect(error.message).toMatch(/no signature header/);
    expect(error.message).toMatch(/more than 4 keys/);
  });

  it('is recognisable with isWebhookVerificationError and has the class name', () => {
    const error = caught(() => verifySync(BODY, '', { secrets: SECRET }));
    expect(isWebhookVerificationError(error)).toBe(true);
    expect(isWebhookVerificationError(new Error('x'))).toBe(false);
    expect(error.name).toBe('WebhookVerificationError');
    expect(error).toBeInstanceOf(Error);
  });
});

describe('header input forms', () => {
  const header = signSync(BODY, { secrets: SECRET, timestamp: NOW });
  it('accepts a one-element array as Node hands a header over', () => {
    expect(verifySync(BODY, [header], { secrets: SECRET, now: NOW }).secretIndex).toBe(0);
  });
  it('treats a repeated header as malformed (two t segments), not first-wins', () => {
    expect(caught(() => verifySync(BODY, [header, header], { secrets: SECRET, now: NOW })).code).toBe('malformed_header');
  });
  it('bounds the header length before parsing', () => {
    expect(caught(() => parseSignatureHeader('t=1,' + ' '.repeat(MAX_HEADER_LENGTH))).code).toBe('header_too_large');
    expect(parseSignatureHeader(`t=1,v1=${'A'.repeat(64)}`)).toEqual({ timestamp: 1, signatures: ['a'.repeat(64)] });
  });
});

describe('option validation', () => {
  const header = signSync(BODY, { secrets: SECRET, timestamp: NOW });
  it.each([NaN, -1, -Infinity, '300' as unknown as number])('tolerance %s is a RangeError', (tolerance) => {
    expect(() => verifySync(BODY, header, { secrets: SECRET, tolerance })).toThrow(RangeError);
  });
  it('now must be finite', () => {
    expect(() => verifySync(BODY, header, { secrets: SECRET, now: NaN })).toThrow(RangeError);
  });
  it('secretEncoding must be utf8 or hex', () => {
    expect(() => verifySync(BODY, header, { secrets: SECRET, secretEncoding: 'base64' as 'hex' })).toThrow(RangeError);
  });
  it('a non-string secret is invalid_secret', () => {
    expect(caught(() => verifySync(BODY, header, { secrets: [SECRET, 5 as unknown as string] })).code).toBe('invalid_secret');
    // Not a string and not an array at all: named, not reported as "no secret configured".
    expect(caught(() => verifySync(BODY, header, { secrets: Buffer.from(SECRET) as unknown as string }))).toMatchObject({
      code: 'invalid_secret',
      message: expect.stringMatching(/^secrets is a byte array: pass the key as text/),
    });
    expect(caught(() => verifySync(BODY, header, { secrets: 42 as unknown as string }))).toMatchObject({
      code: 'invalid_secret',
      message: expect.stringMatching(/^secrets is a number/),
    });
    expect(caught(() => verifySync(BODY, header, { secrets: undefined as unknown as string })).code).toBe('no_secrets');
  });
  it('options left out (untyped callers) are no_secrets, not a TypeError', async () => {
    const untyped = undefined as unknown as { secrets: string };
    expect(caught(() => verifySync(BODY, header, untyped)).code).toBe('no_secrets');
    await expect(verify(BODY, header, untyped)).rejects.toMatchObject({ code: 'no_secrets' });
    expect(caught(() => signSync(BODY, untyped)).code).toBe('no_secrets');
    await expect(sign(BODY, untyped)).rejects.toMatchObject({ code: 'no_secrets' });
  });
  it('a detached ArrayBuffer or view is payload_not_raw, not an engine TypeError', async () => {
    const detachedView = () => {
      const view = new DataView(new TextEncoder().encode(BODY).buffer);
      structuredClone(view.buffer, { transfer: [view.buffer] }); // the view stays, its bytes are gone
      return view;
    };
    // A DataView is not a RawPayload by type, but what untyped code may pass.
    for (const payload of [detachedView().buffer, detachedView() as unknown as Uint8Array]) {
      expect(caught(() => verifySync(payload, header, { secrets: SECRET }))).toMatchObject({
        code: 'payload_not_raw',
        message: expect.stringMatching(/detached/),
      });
      expect(caught(() => signSync(payload, { secrets: SECRET }))).toMatchObject({ code: 'payload_not_raw' });
      await expect(verify(payload, header, { secrets: SECRET })).rejects.toMatchObject({ code: 'payload_not_raw' });
    }
  });
  it('async verify rejects rather than throws', async () => {
    const pending = verify(BODY, header, { secrets: SECRET, tolerance: -1 });
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).rejects.toThrow(RangeError);
  });
});

describe('sign', () => {
  it('writes one v1 per secret, in order, with the given timestamp', () => {
    const header = signSync(BODY, { secrets: ['a', 'b', 'c', 'd'], timestamp: 1234 });
    expect(header).toMatch(/^t=1234(,v1=[0-9a-f]{64}){4}$/);
    for (const [index, key] of ['a', 'b', 'c', 'd'].entries()) {
      expect(verifySync(BODY, header, { secrets: key, now: 1234 }).secretIndex).toBe(0);
      expect(verifySync(BODY, header, { secrets: ['x', key], now: 1234 }).secretIndex, String(index)).toBe(1);
    }
  });
  it('refuses a fifth secret, as the rack does, and zero secrets', async () => {
    expect(() => signSync(BODY, { secrets: 'a,b,c,d,e' })).toThrow(/at most 4/);
    await expect(sign(BODY, { secrets: ['a', 'b', 'c', 'd', 'e'] })).rejects.toThrow(RangeError);
    expect(caught(() => signSync(BODY, { secrets: [] })).code).toBe('no_secrets');
  });
  it('defaults the timestamp to now', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { timestamp } = parseSignatureHeader(await sign(BODY, { secrets: 'k' }));
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(before + 1);
  });
  it.each([-1, 1.5, NaN, 10 ** 15, Number.MAX_SAFE_INTEGER])('refuses timestamp %s', (timestamp) => {
    expect(() => signSync(BODY, { secrets: 'k', timestamp })).toThrow(RangeError);
  });
  it('signs the largest t a verifier takes (15 digits), and the header verifies', () => {
    const header = signSync(BODY, { secrets: 'k', timestamp: 10 ** 15 - 1 });
    expect(verifySync(BODY, header, { secrets: 'k', tolerance: Infinity }).timestamp).toBe(10 ** 15 - 1);
  });
  it('signs with a hex-decoded key under secretEncoding hex', () => {
    const key = 'ab'.repeat(32);
    const header = signSync(BODY, { secrets: key, secretEncoding: 'hex', timestamp: NOW });
    expect(verifySync(BODY, header, { secrets: key, secretEncoding: 'hex', now: NOW }).secretIndex).toBe(0);
    expect(caught(() => verifySync(BODY, header, { secrets: key, secretEncoding: 'utf8', now: NOW })).suggestedSecretEncoding).toBe('hex');
    // Not set: a key of a deployed rack's shape is also tried hex-decoded, and the result says so.
    expect(verifySync(BODY, header, { secrets: key, now: NOW })).toEqual({ timestamp: NOW, secretIndex: 0, secretEncoding: 'hex' });
  });
});

describe('secret caching', () => {
  it('notices an array of secrets mutated between calls', () => {
    const header = signSync(BODY, { secrets: 'new', timestamp: NOW });
    const secrets = ['old'];
    expect(caught(() => verifySync(BODY, header, { secrets, now: NOW })).code).toBe('signature_mismatch');
    secrets.push('new');
    expect(verifySync(BODY, header, { secrets, now: NOW }).secretIndex).toBe(1);
  });
});
