import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError, parseSignatureHeader, signSync, verifySync } from '../../src/index.js';
import { signWithBackend } from '../../src/signature/sign.js';
import { outcome, verifyPaths, webBackend } from './helpers.js';

const secret = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !s.includes(',') && s.trim() === s && s !== '');
const secrets = fc.array(secret, { minLength: 1, maxLength: 4 });
const body = fc.uint8Array({ maxLength: 2048 });
const timestamp = fc.integer({ min: 0, max: 4_000_000_000 });

describe('sign then verify', () => {
  it('round-trips for arbitrary bytes, secrets and timestamps, and reports which secret matched', () => {
    fc.assert(
      fc.property(body, secrets, timestamp, fc.nat(), (bytes, keys, t, pick) => {
        const signer = keys[pick % keys.length]!;
        const header = signSync(bytes, { secrets: [signer], timestamp: t });
        const result = verifySync(bytes, header, { secrets: keys, now: t });
        expect(result.timestamp).toBe(t);
        expect(keys[result.secretIndex]).toBe(signer);
      }),
    );
  });

  // CPU-bound: 9.8 s in CI at load 14 on 2 cores, past vitest's 5 s default. A synchronous test cannot
  // be stopped at its bound anyway: the bound only says how long CPU work may take.
  it(
    'a key of any text, ASCII or not, short or past a block, is its UTF-8 bytes, as createHmac takes a text key',
    { timeout: 60_000 },
    () => {
      // A one-off call encodes one printable ASCII key by a loop and anything else by TextEncoder: both must give
      // the bytes createHmac hashes, lone surrogates included (both replace them with U+FFFD).
      const anyKey = fc
        .oneof(
          fc.string({ minLength: 1, maxLength: 64 }),
          fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
          fc.string({ minLength: 200, maxLength: 300 }),
        )
        .filter((s) => !s.includes(',') && s.trim() === s && s !== '');
      fc.assert(
        fc.property(body, anyKey, timestamp, (bytes, key, t) => {
          const header = `t=${t},v1=${createHmac('sha256', key).update(`${t}.`).update(bytes).digest('hex')}`;
          expect(verifySync(bytes, header, { secrets: key, now: t, secretEncoding: 'utf8' }).secretIndex).toBe(0);
          expect(verifySync(bytes, header, { secrets: [key], now: t, secretEncoding: 'utf8' }).secretIndex).toBe(0);
        }),
      );
    },
  );

  it('agrees between the node and Web Crypto signers', async () => {
    await fc.assert(
      fc.asyncProperty(body, secrets, timestamp, async (bytes, keys, t) => {
        expect(await signWithBackend(webBackend, bytes, { secrets: keys, timestamp: t })).toBe(
          signSync(bytes, { secrets: keys, timestamp: t }),
        );
      }),
      { numRuns: 50 },
    );
  });

  it('fails on any single-bit change to the body', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 512 }),
        secret,
        fc.nat(),
        fc.integer({ min: 0, max: 7 }),
        (bytes, key, at, bit) => {
          const header = signSync(bytes, { secrets: key, timestamp: 1000 });
          const changed = Uint8Array.from(bytes);
          changed[at % changed.length]! ^= 1 << bit;
          expect(() => verifySync(changed, header, { secrets: key, now: 1000 })).toThrowError(
            expect.objectContaining({ code: 'signature_mismatch' }),
          );
        },
      ),
    );
  });

  it('fails on any single-bit change to a signature hex digit or to t', () => {
    fc.assert(
      fc.property(body, secret, fc.integer({ min: 0, max: 63 }), fc.integer({ min: 0, max: 3 }), (bytes, key, at, bit) => {
        const header = signSync(bytes, { secrets: key, timestamp: 1000 });
        const { signatures } = parseSignatureHeader(header);
        const hex = signatures[0]!;
        const digit = (Number.parseInt(hex[at]!, 16) ^ (1 << bit)).toString(16);
        const forged = hex.slice(0, at) + digit + hex.slice(at + 1);
        expect(() => verifySync(bytes, `t=1000,v1=${forged}`, { secrets: key, now: 1000 })).toThrowError(
          expect.objectContaining({ code: 'signature_mismatch' }),
        );
        const otherT = 1000 ^ (1 << bit);
        expect(() => verifySync(bytes, `t=${otherT},v1=${hex}`, { secrets: key, now: otherT })).toThrowError(
          expect.objectContaining({ code: 'signature_mismatch' }),
        );
      }),
    );
  });
});

describe('the time window', () => {
  it('accepts exactly at plus and minus the tolerance and refuses one second past, on every path', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 1_000_000, max: 2_000_000_000 }), async (tolerance, now) => {
        for (const [, path] of verifyPaths) {
          for (const [t, expected] of [
            [now - tolerance, 'ok'],
            [now + tolerance, 'ok'],
            [now - tolerance - 1, 'timestamp_too_old'],
            [now + tolerance + 1, 'timestamp_too_new'],
          ] as const) {
            const header = signSync('{}', { secrets: 'k', timestamp: t });
            const result = await outcome(path, '{}', header, { secrets: 'k', now, tolerance });
            expect('ok' in result ? 'ok' : (result.error as WebhookVerificationError).code).toBe(expected);
          }
        }
      }),
      { numRuns: 30 },
    );
  });
});

describe('parseSignatureHeader on any input', () => {
  it('returns a result or throws WebhookVerificationError, nothing else', () => {
    const segment = fc.oneof(
      fc.string(),
      fc.constantFrom('t=1', 'v1=' + 'a'.repeat(64), 'v0=x', ' t = 5 ', '=', 'v1=', ','),
      fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 60, maxLength: 68 }).map((h) => `v1=${h}`),
      fc.nat().map((n) => `t=${n}`),
    );
    const header = fc.oneof(
      fc.string({ maxLength: 3000 }),
      fc.array(segment, { maxLength: 12 }).map((s) => s.join(',')),
    );
    fc.assert(
      fc.property(header, (value) => {
        try {
          const parsed = parseSignatureHeader(value);
          expect(Number.isSafeInteger(parsed.timestamp)).toBe(true);
          expect(parsed.signatures.length).toBeGreaterThan(0);
          for (const s of parsed.signatures) expect(s).toMatch(/^[0-9a-f]{64}$/);
        } catch (error) {
          expect(error).toBeInstanceOf(WebhookVerificationError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('the canonical fast path and the general scanner agree', () => {
    const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 64, maxLength: 64 });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999_999_999_999_999 }), hex, (t, signature) => {
        // up to 15 digits
        const canonical = parseSignatureHeader(`t=${t},v1=${signature}`);
        const spaced = parseSignatureHeader(` t = ${t} , v1 = ${signature} `); // never canonical
        expect(canonical).toEqual(spaced);
        expect(canonical).toEqual({ timestamp: t, signatures: [signature.toLowerCase()] });
      }),
    );
    for (const almost of [
      't=,v1=' + 'a'.repeat(64),
      't=12,v2=' + 'a'.repeat(64),
      't=1x,v1=' + 'a'.repeat(64),
      't=1,v1=' + 'g'.repeat(64),
      'x=1,v1=' + 'a'.repeat(64),
    ]) {
      expect(() => parseSignatureHeader(almost), almost).toThrow(WebhookVerificationError);
    }
  });

  it('verify on any header gives a result or a WebhookVerificationError', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (value) => {
        try {
          verifySync('{}', value, { secrets: 'k' });
        } catch (error) {
          expect(error).toBeInstanceOf(WebhookVerificationError);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
