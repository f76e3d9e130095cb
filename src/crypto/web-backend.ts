import type { HmacBackend, HmacKey } from './backend.js';
import { bytesToBase64Url, bytesToHex } from '../shared/hex.js';

const cryptoKeys = new WeakMap<HmacKey, Promise<CryptoKey>>();
const utf8 = new TextEncoder();

function subtle(): SubtleCrypto {
  const api = (globalThis as { crypto?: Crypto }).crypto?.subtle;
  if (api === undefined) {
    throw new Error('rack-webhooks: this runtime has neither node:crypto nor Web Crypto (crypto.subtle).');
  }
  return api;
}

function importKey(key: HmacKey): Promise<CryptoKey> {
  let imported = cryptoKeys.get(key);
  if (imported === undefined) {
    imported = subtle().importKey('raw', key.bytes as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    cryptoKeys.set(key, imported);
  }
  return imported;
}

function signedBytes(timestampText: string, body: Uint8Array | string): Uint8Array<ArrayBuffer> {
  const prefix = utf8.encode(`${timestampText}.`);
  const payload = typeof body === 'string' ? utf8.encode(body) : body;
  const joined = new Uint8Array(prefix.length + payload.length);
  joined.set(prefix, 0);
  joined.set(payload, prefix.length);
  return joined;
}

/** Web Crypto: Workers, browsers, Deno, Bun, and Node releases without getBuiltinModule. */
export const webBackend: HmacBackend = {
  name: 'web',
  hmac: async (key, timestampText, body) => {
    const cryptoKey = await importKey(key);
    return new Uint8Array(await subtle().sign('HMAC', cryptoKey, signedBytes(timestampText, body)));
  },
  sha256: async (body) => {
    // Web Crypto refuses views of a SharedArrayBuffer; signedBytes copies for hmac, this must too.
    const bytes = typeof body === 'string' ? utf8.encode(body) : body.buffer instanceof ArrayBuffer ? body : body.slice();
    return bytesToBase64Url(new Uint8Array(await subtle().digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)));
  },
  encodeHex: (digest) => (typeof digest === 'string' ? digest : bytesToHex(digest)),
};
