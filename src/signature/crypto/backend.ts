import type { SigningKey } from '../secrets.js';

/**
 * The one thing verification needs from a crypto library: HMAC-SHA256 over `${t}.` and the body,
 * and a constant-time comparison. Node and Web Crypto each provide one.
 */
export interface HmacBackend {
  readonly name: 'node' | 'web';
  /** Present only where a synchronous HMAC exists (node:crypto). */
  readonly hmacSync?: (key: SigningKey, timestampText: string, body: Uint8Array | string) => Uint8Array;
  readonly hmac: (key: SigningKey, timestampText: string, body: Uint8Array | string) => Promise<Uint8Array>;
  readonly encodeHex: (bytes: Uint8Array) => string;
}
