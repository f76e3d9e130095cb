import type { SigningKey } from '../signature/secrets.js';

/**
 * What the SDK needs from a crypto library: HMAC-SHA256 over `${t}.` and the body (verification)
 * and SHA-256 of the body (replay keys). Node and Web Crypto each provide both.
 */
export interface HmacBackend {
  readonly name: 'node' | 'web';
  /** Present only where a synchronous HMAC exists (node:crypto). */
  readonly hmacSync?: (key: SigningKey, timestampText: string, body: Uint8Array | string) => Uint8Array;
  readonly hmac: (key: SigningKey, timestampText: string, body: Uint8Array | string) => Promise<Uint8Array>;
  /** SHA-256 of the raw body, base64url (43 characters): the replay-protection key. */
  readonly sha256: (body: Uint8Array | string) => Promise<string>;
  /** Present only where a synchronous hash exists (node:crypto). */
  readonly sha256Sync?: (body: Uint8Array | string) => string;
  readonly encodeHex: (bytes: Uint8Array) => string;
}
