import { createHash, createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createNodeBackend, getNodeBackend } from '../../src/crypto/node-backend.js';

const nodeBackend = getNodeBackend();
import { loadNodeCrypto } from '../../src/crypto/node-crypto.js';
import { createOneShotHmac, ONE_SHOT_MAX_BODY_BYTES } from '../../src/crypto/one-shot-hmac.js';
import { webBackend } from '../../src/crypto/web-backend.js';
import { bytesToBase64Url } from '../../src/shared/hex.js';

describe('body hashing for replay keys', () => {
  it('Node and Web Crypto give the same base64url SHA-256 for any body, bytes or text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.string({ maxLength: 200 })), async (body) => {
        const expected = createHash('sha256').update(body).digest('base64url');
        expect(nodeBackend!.sha256Sync!(body)).toBe(expected);
        expect(await nodeBackend!.sha256(body)).toBe(expected);
        expect(await webBackend.sha256(body)).toBe(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('Web Crypto hashes and signs a body that is a view of a SharedArrayBuffer', async () => {
    const shared = new Uint8Array(new SharedArrayBuffer(64), 8, 32);
    shared.set(randomBytes(32));
    const expected = createHash('sha256').update(shared).digest('base64url');
    expect(await webBackend.sha256(shared)).toBe(expected);
    const key = { source: 'k', bytes: new TextEncoder().encode('k') };
    expect(Buffer.from((await webBackend.hmac(key, '1', shared)) as Uint8Array).toString('hex')).toBe(
      createHmac('sha256', 'k').update('1.').update(shared).digest('hex'),
    );
  });

  it('bytesToBase64Url matches Buffer for every length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        expect(bytesToBase64Url(bytes)).toBe(Buffer.from(bytes).toString('base64url'));
      }),
    );
  });
});

describe('HMAC-SHA256 on Node: one-shot (RFC 2104 over crypto.hash) and createHmac agree', () => {
  const oneShot = nodeBackend!;
  const streaming = createNodeBackend(loadNodeCrypto(), { oneShot: false })!;
  const hex = (digest: Uint8Array | string) => (typeof digest === 'string' ? digest : Buffer.from(digest).toString('hex'));

  // CPU-bound (300 runs): 9.5 s at load 14 on 2 cores, past vitest's 5 s default. A synchronous test
  // cannot be stopped at its bound anyway: the bound only says how long CPU work may take.
  it('for any key (shorter, equal to and longer than a block), timestamp and body, bytes or text', { timeout: 60_000 }, () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 200 }),
        fc.bigInt({ min: 0n, max: 999_999_999_999_999n }),
        fc.oneof(fc.uint8Array({ maxLength: 2048 }), fc.string({ unit: 'binary', maxLength: 1024 })),
        (keyBytes, t, body) => {
          const key = { source: 'k', bytes: keyBytes };
          const expected = createHmac('sha256', keyBytes).update(`${t}.`).update(body).digest('hex');
          expect(hex(oneShot.hmacSync!(key, String(t), body))).toBe(expected);
          expect(hex(streaming.hmacSync!(key, String(t), body))).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('at and past the one-shot size limit, and for a body that is a view into a larger buffer', () => {
    const key = { source: 'secret', bytes: new TextEncoder().encode('secret') };
    for (const size of [ONE_SHOT_MAX_BODY_BYTES - 1, ONE_SHOT_MAX_BODY_BYTES, ONE_SHOT_MAX_BODY_BYTES + 1, 300_000]) {
      const body = randomBytes(size);
      expect(hex(oneShot.hmacSync!(key, '1700000000', body))).toBe(
        createHmac('sha256', 'secret').update('1700000000.').update(body).digest('hex'),
      );
    }
    const backing = randomBytes(4096);
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 100, 1000);
    expect(hex(oneShot.hmacSync!(key, '1', view))).toBe(createHmac('sha256', 'secret').update('1.').update(view).digest('hex'));
    // A text body whose UTF-8 form is near the limit takes the streaming path and still agrees.
    const text = '\u{1f600}'.repeat(ONE_SHOT_MAX_BODY_BYTES / 4);
    expect(hex(oneShot.hmacSync!(key, '1', text))).toBe(createHmac('sha256', 'secret').update('1.').update(text).digest('hex'));
  });

  it('one key used in turn with others, so no padded key leaks into the next call', () => {
    const keys = ['a', 'b'.repeat(64), 'c'.repeat(65)].map((text) => ({ source: text, bytes: new TextEncoder().encode(text) }));
    for (let round = 0; round < 3; round++) {
      for (const key of keys) {
        const expected = createHmac('sha256', key.bytes).update('9.').update('{}').digest('hex');
        expect(hex(oneShot.hmacSync!(key, '9', '{}'))).toBe(expected);
      }
    }
  });

  it('is the path Node takes, and falls back to createHmac when crypto.hash is missing', () => {
    const nodeCrypto = loadNodeCrypto();
    expect(createOneShotHmac(nodeCrypto!, Buffer)).toBeTypeOf('function');
    const withoutHash = { ...nodeCrypto!, hash: undefined } as unknown as typeof nodeCrypto & object;
    expect(createOneShotHmac(withoutHash, Buffer)).toBeUndefined();
    // A runtime whose hash gives wrong answers fails the known-answer check and is not used.
    const wrongHash = { ...nodeCrypto!, hash: () => '00' } as unknown as typeof nodeCrypto & object;
    expect(createOneShotHmac(wrongHash, Buffer)).toBeUndefined();
    const fallback = createNodeBackend(withoutHash)!;
    const key = { source: 's', bytes: new TextEncoder().encode('s') };
    expect(hex(fallback.hmacSync!(key, '1', 'x'))).toBe(createHmac('sha256', 's').update('1.x').digest('hex'));
    expect(fallback.sha256Sync!('abc')).toBe(createHash('sha256').update('abc').digest('base64url'));
  });
});

describe('the backend is chosen on first use, not at import', () => {
  it('importing the built package loads no node:crypto; the first signature does', () => {
    // A fresh process, as on a cold start: the built package by its name (dist/ is built before the tests).
    const script = `
      const loaded = () => process.moduleLoadList.includes('NativeModule crypto');
      const before = loaded();
      const { signSync, verifySync } = await import('rack-webhooks');
      const afterImport = loaded();
      verifySync('{}', signSync('{}', { secrets: 'k' }), { secrets: 'k' });
      console.log(JSON.stringify({ before, afterImport, afterVerify: loaded() }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: new URL('../..', import.meta.url),
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({ before: false, afterImport: false, afterVerify: true });
  });
});
