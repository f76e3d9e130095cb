import type { HmacKey } from './backend.js';

type NodeCrypto = typeof import('node:crypto');
type BufferConstructor = typeof import('node:buffer').Buffer;

/**
 * HMAC-SHA256(key, `${timestampText}.` + body) as 64 lowercase hex characters, or undefined to
 * defer to createHmac.
 */
export type OneShotHmac = (key: HmacKey, timestampText: string, body: Uint8Array | string) => string | undefined;

const BLOCK_BYTES = 64;
const DIGEST_BYTES = 32;
const IPAD = 0x36;
const OPAD = 0x5c;
/**
 * Bodies up to this size are copied once into a reusable buffer; past it the copy costs more than
 * the HMAC object it saves, and `createHmac` streams the body instead.
 */
export const ONE_SHOT_MAX_BODY_BYTES = 16 * 1024;
/** Room for the padded key, `t` (at most 15 digits), the dot and the largest body taken here. */
const SCRATCH_BYTES = BLOCK_BYTES + 16 + ONE_SHOT_MAX_BODY_BYTES;
/** TypedArray's own fill: Buffer#fill validates its arguments first, which costs more than zeroing 1 KiB. */
const fillBytes = Uint8Array.prototype.fill;

/** What a one-shot HMAC leaves in memory between calls, for the test suite to check it is zero. */
export interface OneShotHmacState {
  readonly scratch: Uint8Array;
  /** The outer round's input: key XOR opad, then the inner digest. */
  readonly outer: Uint8Array;
}

/**
 * HMAC-SHA256 as RFC 2104 defines it, on top of Node's one-shot `crypto.hash`. On Node 20
 * `createHmac` builds a JS object and an OpenSSL MAC context per call, which costs more than
 * hashing a 1 KiB body; two one-shot digests over a reused buffer do the same work without either.
 * Used only after a known-answer check against `createHmac`, so a runtime whose `crypto.hash`
 * differs (or lacks the `'buffer'` encoding) keeps the classic path.
 *
 * Nothing derived from a key or a body stays behind: the padded key blocks are written into two
 * reused buffers at each call, and both buffers are zeroed before the call returns.
 */
export function createOneShotHmac(
  crypto: NodeCrypto,
  BufferClass: BufferConstructor,
  state?: { scratch?: Uint8Array; outer?: Uint8Array },
): OneShotHmac | undefined {
  // Text output on purpose: a 'buffer' result allocates an ArrayBuffer per call, which costs more
  // than hashing the 96 bytes of the outer round.
  const hash = (crypto as { hash?: (algorithm: string, data: Uint8Array | string, encoding: 'latin1' | 'hex') => string }).hash;
  if (typeof hash !== 'function') return undefined;

  // One buffer for every call: verification is synchronous, so no two calls ever share it.
  const scratch = BufferClass.alloc(SCRATCH_BYTES);
  if (state !== undefined) state.scratch = scratch;

  // The padded key is written into the call's own buffers and wiped with them: a per-key cache
  // (a WeakMap of padded blocks) cost a WeakMap entry per one-off call, a fifth of its time in the
  // garbage collector, to save two 64-byte XOR loops.
  const outer = BufferClass.alloc(BLOCK_BYTES + DIGEST_BYTES);
  if (state !== undefined) state.outer = outer;
  const padInto = (key: HmacKey): void => {
    // A key longer than a block is replaced by its digest, as RFC 2104 says.
    const bytes = key.bytes.length > BLOCK_BYTES ? BufferClass.from(hash('sha256', key.bytes, 'hex'), 'hex') : key.bytes;
    for (let i = 0; i < BLOCK_BYTES; i++) {
      const byte = i < bytes.length ? bytes[i]! : 0;
      scratch[i] = byte ^ IPAD;
      outer[i] = byte ^ OPAD;
    }
    if (bytes !== key.bytes) fillBytes.call(bytes, 0);
  };

  // The inner round's input as a view, remade only when its length changes: a subarray per call
  // is a Buffer object per call.
  let message = scratch.subarray(0, 0);
  const oneShot: OneShotHmac = (key, timestampText, body) => {
    const isText = typeof body === 'string';
    // A string's UTF-8 form is at most three bytes per UTF-16 unit.
    const maxBodyBytes = isText ? body.length * 3 : body.byteLength;
    if (maxBodyBytes > ONE_SHOT_MAX_BODY_BYTES || timestampText.length > 15) return undefined;
    let length = BLOCK_BYTES;
    try {
      padInto(key);
      // A dozen digits and a 32-character digest are copied in JS: Buffer#write's call into C++
      // and its argument checks cost more than the copy.
      for (let i = 0; i < timestampText.length; i++) scratch[length++] = timestampText.charCodeAt(i);
      scratch[length++] = 0x2e; // '.'
      if (isText) length += scratch.write(body, length, 'utf8');
      else {
        scratch.set(body, length);
        length += body.byteLength;
      }
      if (message.length !== length) message = scratch.subarray(0, length);
      const innerDigest = hash('sha256', message, 'latin1');
      for (let i = 0; i < DIGEST_BYTES; i++) outer[BLOCK_BYTES + i] = innerDigest.charCodeAt(i);
      return hash('sha256', outer, 'hex');
    } finally {
      fillBytes.call(scratch, 0, 0, length);
      fillBytes.call(outer, 0);
    }
  };

  return passesKnownAnswers(crypto, oneShot) ? oneShot : undefined;
}

/** Short, block-sized and long keys, bytes and text bodies: all must equal createHmac's answer. */
function passesKnownAnswers(crypto: NodeCrypto, oneShot: OneShotHmac): boolean {
  const encoder = new TextEncoder();
  const keys = ['k', 'x'.repeat(BLOCK_BYTES), 'long key '.repeat(20)].map((text) => ({ bytes: encoder.encode(text) }));
  const bodies: (Uint8Array | string)[] = [
    '{"action":"app:budget:cap"}',
    'caf\u00e9 \u{1f600}',
    new Uint8Array([0xef, 0xbb, 0xbf, 0xff, 0x00, 0x80]),
  ];
  try {
    for (const key of keys) {
      for (const body of bodies) {
        const expected = crypto.createHmac('sha256', key.bytes).update('1700000000.').update(body).digest('hex');
        if (oneShot(key, '1700000000', body) !== expected) return false;
      }
    }
    return true;
  } catch {
    return false;
  }
}
