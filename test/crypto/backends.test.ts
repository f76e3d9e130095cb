import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/crypto/node-backend.js';
import { webBackend } from '../../src/crypto/web-backend.js';
import { bytesToBase64Url } from '../../src/signature/hex.js';

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

  it('bytesToBase64Url matches Buffer for every length', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
      expect(bytesToBase64Url(bytes)).toBe(Buffer.from(bytes).toString('base64url'));
    }));
  });
});
