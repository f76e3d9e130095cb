import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../../src/index.js';
import { nodeBackend, outcome, vectorOptions, vectors, verifyPaths } from './helpers.js';

describe('the shared vector file', () => {
  it('covers every error code of the contract', () => {
    const codes = new Set(vectors.flatMap((v) => ('error' in v.expect ? [v.expect.error] : [])));
    expect([...codes].sort()).toEqual(
      [
        'header_too_large',
        'invalid_secret',
        'malformed_header',
        'missing_header',
        'no_secrets',
        'no_v1_signatures',
        'signature_mismatch',
        'timestamp_too_new',
        'timestamp_too_old',
        'too_many_signatures',
      ].sort(),
    );
  });

  it('its valid vectors hold HMACs computed independently of the SDK', () => {
    const valid = vectors.filter((v) => 'secretIndex' in v.expect && v.expect.secretEncoding !== 'hex');
    for (const vector of valid) {
      const body = Buffer.from(vector.bodyBase64, 'base64');
      const t = /t\s*=\s*(\d+)/.exec(vector.header!)![1]!;
      const keys = typeof vector.secrets === 'string' ? vector.secrets.split(',').map((s) => s.trim()) : vector.secrets;
      const expected = keys.map((k) => createHmac('sha256', k).update(`${t}.`).update(body).digest('hex'));
      expect(
        expected.some((sig) => vector.header!.toLowerCase().includes(sig)),
        vector.name,
      ).toBe(true);
    }
  });
});

describe.each(verifyPaths)('%s', (_, path) => {
  it.each(vectors.map((v) => [v.name, v] as const))('%s', async (_name, vector) => {
    const body = Buffer.from(vector.bodyBase64, 'base64');
    const result = await outcome(path, new Uint8Array(body), vector.header, vectorOptions(vector));
    if ('secretIndex' in vector.expect) {
      expect(result).toEqual({ ok: vector.expect });
    } else {
      expect(result.error).toBeInstanceOf(WebhookVerificationError);
      const error = result.error as WebhookVerificationError;
      expect(error.code).toBe(vector.expect.error);
      if (vector.expect.suggestedSecretEncoding !== undefined) {
        expect(error.suggestedSecretEncoding).toBe(vector.expect.suggestedSecretEncoding);
        expect(error.message).toContain(`secretEncoding: '${vector.expect.suggestedSecretEncoding}'`);
      }
    }
  });

  it('gives the same answer for the body as a string, a Buffer, a Uint8Array and an ArrayBuffer', async () => {
    const vector = vectors[0]!;
    const bytes = Buffer.from(vector.bodyBase64, 'base64');
    const forms = [
      bytes.toString('utf8'),
      bytes,
      new Uint8Array(bytes),
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
    ];
    for (const form of forms) {
      expect(await outcome(path, form, vector.header, vectorOptions(vector))).toEqual({ ok: vector.expect });
    }
  });
});

it('runs on node:crypto here, so the Node path is really exercised', () => {
  expect(nodeBackend?.name).toBe('node');
});
