import type { HmacBackend } from './backend.js';
import { nodeCrypto } from './node-crypto.js';
import type { SigningKey } from '../signature/secrets.js';

type KeyObject = import('node:crypto').KeyObject;
const keyObjects = new WeakMap<SigningKey, KeyObject>();

function createNodeBackend(): HmacBackend | undefined {
  const crypto = nodeCrypto;
  if (crypto === undefined) return undefined;
  const BufferCtor = (globalThis as { Buffer?: typeof import('node:buffer').Buffer }).Buffer;
  if (BufferCtor === undefined) return undefined;

  const keyObjectFor = (key: SigningKey): KeyObject => {
    let keyObject = keyObjects.get(key);
    if (keyObject === undefined) {
      keyObject = crypto.createSecretKey(key.bytes);
      keyObjects.set(key, keyObject);
    }
    return keyObject;
  };

  const hmacSync = (key: SigningKey, timestampText: string, body: Uint8Array | string): Uint8Array =>
    crypto.createHmac('sha256', keyObjectFor(key)).update(`${timestampText}.`).update(body).digest();

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
    sha256Sync: (body) => crypto.createHash('sha256').update(body).digest('base64url'),
    sha256: (body) => {
      try {
        return Promise.resolve(crypto.createHash('sha256').update(body).digest('base64url'));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    encodeHex: (bytes) => BufferCtor.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex'),
  };
}

export const nodeBackend: HmacBackend | undefined = createNodeBackend();
