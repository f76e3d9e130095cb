/**
 * An HMAC key as the backends take it. Node's derives nothing it keeps (the padded blocks are made
 * per call and wiped); Web Crypto's caches its CryptoKey in a WeakMap keyed by this object, so it
 * lives exactly as long as whoever owns the key: a receiver for its lifetime, a one-off `verify`
 * for one call (or its options object's life, where keys are remembered against it).
 */
export interface HmacKey {
  readonly bytes: Uint8Array;
}

/**
 * An HMAC-SHA256 digest: 32 bytes, or the same as 64 lowercase hex characters (Node's one-shot
 * path returns text, which skips allocating an ArrayBuffer per digest).
 */
export type Digest = Uint8Array | string;

/**
 * What the SDK needs from a crypto library: HMAC-SHA256 over `${t}.` and the body (verification)
 * and SHA-256 of the body (replay keys). Node and Web Crypto each provide both.
 */
export interface HmacBackend {
  readonly name: 'node' | 'web';
  /** Present only where a synchronous HMAC exists (node:crypto). */
  readonly hmacSync?: (key: HmacKey, timestampText: string, body: Uint8Array | string) => Digest;
  readonly hmac: (key: HmacKey, timestampText: string, body: Uint8Array | string) => Promise<Digest>;
  /** SHA-256 of the raw body, base64url (43 characters): the replay-protection key. */
  readonly sha256: (body: Uint8Array | string) => Promise<string>;
  /** Present only where a synchronous hash exists (node:crypto). */
  readonly sha256Sync?: (body: Uint8Array | string) => string;
  readonly encodeHex: (digest: Digest) => string;
}
