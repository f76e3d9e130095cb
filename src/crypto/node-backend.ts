import type { Digest, HmacBackend, HmacKey } from './backend.js';
import { loadNodeCrypto } from './node-crypto.js';
import { createOneShotHmac, type OneShotHmac } from './one-shot-hmac.js';

type NodeCrypto = typeof import('node:crypto');

export interface NodeBackendOptions {
  /** HMAC and SHA-256 through one-shot `crypto.hash` where it exists; default true. */
  oneShot?: boolean;
}

/** Exposed for the test suite, which runs every vector through both Node paths. */
export function createNodeBackend(crypto: NodeCrypto | undefined, options: NodeBackendOptions = {}): HmacBackend | undefined {
  if (crypto === undefined) return undefined;
  const BufferClass = (globalThis as { Buffer?: typeof import('node:buffer').Buffer }).Buffer;
  if (BufferClass === undefined) return undefined;

  // The key bytes straight to createHmac: a cached KeyObject would be one more copy of the key
  // held by this module, and past 16 KiB (the only bodies that come here) the hash dominates.
  const streamingHmac = (key: HmacKey, timestampText: string, body: Uint8Array | string): Uint8Array =>
    crypto.createHmac('sha256', key.bytes).update(`${timestampText}.`).update(body).digest();

  // Decided on first use, not at import: the known-answer check and the scratch buffer cost
  // nothing in a process that never verifies.
  let oneShotHmac: OneShotHmac | undefined | null = options.oneShot === false ? undefined : null;
  const hmacSync = (key: HmacKey, timestampText: string, body: Uint8Array | string): Digest => {
    if (oneShotHmac === null) oneShotHmac = createOneShotHmac(crypto, BufferClass);
    return (oneShotHmac !== undefined ? oneShotHmac(key, timestampText, body) : undefined) ?? streamingHmac(key, timestampText, body);
  };

  const hash = (crypto as { hash?: (algorithm: string, data: Uint8Array | string, encoding: string) => string }).hash;
  const oneShotHash = options.oneShot !== false && typeof hash === 'function' && hashesKnownAnswer(hash);
  const sha256Sync = oneShotHash
    ? (body: Uint8Array | string): string => hash('sha256', body, 'base64url')
    : (body: Uint8Array | string): string => crypto.createHash('sha256').update(body).digest('base64url');

  return {
    name: 'node',
    hmacSync,
    // Synchronous on purpose: crypto.subtle costs tens of microseconds a call on Node.
    hmac: (key, timestampText, body) => {
      try {
        return Promise.resolve(hmacSync(key, timestampText, body));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    sha256Sync,
    sha256: (body) => {
      try {
        return Promise.resolve(sha256Sync(body));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    encodeHex: (digest) =>
      typeof digest === 'string' ? digest : BufferClass.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('hex'),
  };
}

/** SHA-256("abc") in base64url: a runtime whose one-shot hash disagrees keeps createHash. */
function hashesKnownAnswer(hash: (algorithm: string, data: string, encoding: string) => string): boolean {
  try {
    return hash('sha256', 'abc', 'base64url') === 'ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0';
  } catch {
    return false;
  }
}

let created: HmacBackend | undefined | null = null;

/**
 * The node:crypto backend, built on first use rather than at import (see loadNodeCrypto);
 * undefined where node:crypto is missing.
 */
export function getNodeBackend(): HmacBackend | undefined {
  if (created === null) created = createNodeBackend(loadNodeCrypto());
  return created;
}
