// Where key material and bodies live. A receiver prepares its keys once and owns them; a one-off
// verify or sign on node:crypto makes its keys for the call and drops them (on Web Crypto alone it
// keeps them against the caller's options object); the one-shot HMAC leaves no body, no padded key
// and nothing derived from either in its buffers; and nothing about a secret outlives its owner.
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadNodeCrypto } from '../../src/crypto/node-crypto.js';
import { ONE_SHOT_MAX_BODY_BYTES, createOneShotHmac } from '../../src/crypto/one-shot-hmac.js';
import { createReceiver, signSync, verify, verifySync, type WebhookVerificationErrorCode } from '../../src/index.js';
import { ROOT, assertBuilt } from '../examples/helpers.js';
import { T0, delivery } from '../receiver/helpers.js';

const errorCodeOf = (fn: () => unknown): WebhookVerificationErrorCode | 'none' => {
  try {
    fn();
    return 'none';
  } catch (error) {
    return (error as { code: WebhookVerificationErrorCode }).code;
  }
};

describe('the one-shot HMAC leaves no body and no key material behind', () => {
  it('its buffers (the padded key, the body, the inner digest) are all zeros after every call, bytes or text, small or at the limit', () => {
    const state: { scratch?: Uint8Array; outer?: Uint8Array } = {};
    const hmac = createOneShotHmac(loadNodeCrypto()!, Buffer, state)!;
    const key = { bytes: new TextEncoder().encode('a key of the receiver') };
    const longKey = { bytes: randomBytes(100) };
    const bodies: (Uint8Array | string)[] = [
      Buffer.from('{"action":"app:budget:cap","data":{"note":"customer data"}}'),
      'caf\u00e9 customer data \u{1f600}',
      randomBytes(ONE_SHOT_MAX_BODY_BYTES),
    ];
    for (const k of [key, longKey]) {
      for (const body of bodies) {
        expect(hmac(k, String(T0), body)).toBe(createHmac('sha256', k.bytes).update(`${T0}.`).update(body).digest('hex'));
        expect(state.scratch!.length).toBeGreaterThan(ONE_SHOT_MAX_BODY_BYTES);
        expect(state.scratch!.every((byte) => byte === 0)).toBe(true);
        expect(state.outer!.length).toBe(96);
        expect(state.outer!.every((byte) => byte === 0)).toBe(true);
      }
    }
  });
});

describe('receivers own their keys: two receivers share no key state', () => {
  it('interleaved deliveries: each receiver accepts only what its own secret signed', async () => {
    const a = createReceiver({ secrets: 'secret-of-a', now: () => T0 * 1000, dedup: false });
    const b = createReceiver({ secrets: 'secret-of-b', now: () => T0 * 1000, dedup: false });
    const outcome = (receiver: typeof a, secret: string) =>
      receiver.receive(delivery('app:budget:cap', { secret })).then(
        (r) => r.outcome,
        (e: { code: string }) => e.code,
      );
    for (let round = 0; round < 3; round++) {
      expect(await outcome(a, 'secret-of-a')).toBe('processed');
      expect(await outcome(b, 'secret-of-a')).toBe('signature_mismatch');
      expect(await outcome(b, 'secret-of-b')).toBe('processed');
      expect(await outcome(a, 'secret-of-b')).toBe('signature_mismatch');
    }
  });

  it('the same secret text under two encodings: each receiver keeps its own key bytes', async () => {
    const text = 'aabbccddeeff00112233445566778899';
    const asText = createReceiver({ secrets: text, now: () => T0 * 1000, dedup: false });
    const asHex = createReceiver({ secrets: text, secretEncoding: 'hex', now: () => T0 * 1000, dedup: false });
    const body = delivery('app:budget:cap').body;
    const signedAs = (secretEncoding: 'utf8' | 'hex') => ({
      body,
      headers: { 'service-signature': signSync(body, { secrets: text, secretEncoding, timestamp: T0 }) },
    });
    const outcome = (receiver: typeof asText, d: ReturnType<typeof signedAs>) =>
      receiver.receive(d).then(
        (r) => r.outcome,
        (e: { code: string }) => e.code,
      );
    expect(await outcome(asText, signedAs('utf8'))).toBe('processed');
    expect(await outcome(asHex, signedAs('hex'))).toBe('processed');
    expect(await outcome(asText, signedAs('hex'))).toBe('signature_mismatch');
    expect(await outcome(asHex, signedAs('utf8'))).toBe('signature_mismatch');
  });

  it('a receiver takes its keys at creation: changing the array passed in afterwards changes nothing', async () => {
    const secrets = ['first-key'];
    const receiver = createReceiver({ secrets, now: () => T0 * 1000, dedup: false });
    secrets[0] = 'replaced-key';
    await expect(receiver.receive(delivery('app:budget:cap', { secret: 'first-key' }))).resolves.toMatchObject({ outcome: 'processed' });
    await expect(receiver.receive(delivery('app:budget:cap', { secret: 'replaced-key' }))).rejects.toMatchObject({
      code: 'signature_mismatch',
    });
  });
});

describe('one-off verify and sign: keys follow the options object as it is now', () => {
  const body = '{"action":"app:budget:cap"}';
  const signedWith = (secret: string) => signSync(body, { secrets: secret, timestamp: T0 });

  it('the same options object with its secrets changed, a string or an array changed in place', async () => {
    const options: { secrets: string | string[]; now: number; secretEncoding?: 'utf8' | 'hex' } = { secrets: 'one', now: T0 };
    expect(errorCodeOf(() => verifySync(body, signedWith('one'), options))).toBe('none');
    options.secrets = 'two';
    expect(errorCodeOf(() => verifySync(body, signedWith('one'), options))).toBe('signature_mismatch');
    expect(errorCodeOf(() => verifySync(body, signedWith('two'), options))).toBe('none');
    const list = ['three'];
    options.secrets = list;
    await expect(verify(body, signedWith('three'), options)).resolves.toMatchObject({ secretIndex: 0 });
    list[0] = 'four';
    list.push('three');
    await expect(verify(body, signedWith('three'), options)).resolves.toMatchObject({ secretIndex: 1 });
    options.secrets = 'ab'; // valid as text and as hex: the encoding is part of what is remembered
    options.secretEncoding = 'hex';
    expect(errorCodeOf(() => verifySync(body, signSync(body, { secrets: 'ab', secretEncoding: 'hex', timestamp: T0 }), options))).toBe(
      'none',
    );
    expect(errorCodeOf(() => verifySync(body, signedWith('ab'), options))).toBe('signature_mismatch');
  });

  it('sign uses the options it is given, call after call', () => {
    const options = { secrets: 'five', timestamp: T0 };
    const first = signSync(body, options);
    options.secrets = 'six';
    expect(signSync(body, options)).not.toBe(first);
    expect(signSync(body, options)).toBe(signedWith('six'));
  });
});

// In a fresh process against the built package: a V8 heap snapshot lists every live string, so a
// secret (or a text body) still referenced by the module after its owner is gone would be found.
// The receiver case is the control that shows the search finds a secret that is still held.
const HEAP_SCRIPT = `
import { getHeapSnapshot } from 'node:v8';
import { randomBytes } from 'node:crypto';
import { createReceiver, sign, signSync, verify, verifySync } from 'rack-webhooks';

// The script keeps what it looks for as bytes, which a heap snapshot does not list: a string it
// kept itself would be found and prove nothing. Each text becomes a string only where it is used.
const textOf = (bytes) => bytes.toString('latin1');
async function heapHas(texts) {
  globalThis.gc();
  let heap = '';
  for await (const chunk of getHeapSnapshot()) heap += chunk;
  return texts.map((bytes) => heap.includes(textOf(bytes)));
}
const fresh = (prefix) => Buffer.from(prefix + randomBytes(16).toString('hex'), 'latin1');
const text = fresh('secret-'), first = fresh('secret-'), second = fresh('secret-'), marker = fresh('body-');
const hexKey = Buffer.from(randomBytes(32).toString('hex'), 'latin1');

async function oneOffCalls() {
  const body = JSON.stringify({ action: 'app:budget:cap', data: { note: textOf(marker) } });
  verifySync(body, signSync(body, { secrets: textOf(text) }), { secrets: textOf(text) });
  await verify(Buffer.from(body), await sign(body, { secrets: [textOf(first), textOf(second)] }), { secrets: [textOf(second), textOf(first)] });
  verifySync(body, signSync(body, { secrets: textOf(hexKey), secretEncoding: 'hex' }), { secrets: textOf(hexKey), secretEncoding: 'hex' });
  try { verifySync(body, signSync(body, { secrets: textOf(text) }), { secrets: textOf(hexKey) }); } catch {} // the mismatch path and its hints
  try { verifySync(body, signSync(body, { secrets: textOf(hexKey), secretEncoding: 'hex' }), { secrets: textOf(hexKey) }); } catch {}
}

async function receiverWith(secret) {
  const receiver = createReceiver({ secrets: textOf(secret), dedup: false });
  const body = JSON.stringify({ action: 'app:budget:cap', status: 'success', timestamp: '2026-04-27T10:30:00Z', data: {} });
  await receiver.receive({ body, headers: { 'service-signature': signSync(body, { secrets: textOf(secret) }) } });
  return receiver;
}

await oneOffCalls();
const afterOneOff = await heapHas([text, hexKey, first, second, marker]);
const secret = fresh('secret-');
let receiver = await receiverWith(secret);
const whileReceiverLives = await heapHas([secret]);
receiver = undefined;
const afterReceiver = await heapHas([secret]);
console.log(JSON.stringify({ afterOneOff, whileReceiverLives, afterReceiver }));
`;

describe('nothing about a secret or a body outlives its owner (heap snapshot of the built package)', () => {
  it('one-off calls leave no secret and no body; a receiver holds its secret until it is dropped', () => {
    assertBuilt();
    const output = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', HEAP_SCRIPT], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(JSON.parse(output)).toEqual({
      afterOneOff: [false, false, false, false, false],
      whileReceiverLives: [true],
      afterReceiver: [false],
    });
  }, 90_000);
});
