import { toSigningKeys, type SecretEncoding, type SigningKey } from './secrets.js';

/**
 * Receivers pass the same secrets on every delivery; splitting, encoding and importing them
 * each time would cost more than the HMAC of a small body. Keys are cached by value for
 * strings and by identity (re-checked element by element) for arrays.
 */
const MAX_CACHED_STRINGS = 64;
const byString = new Map<string, SigningKey[]>();
const byArray = new WeakMap<readonly string[], { encoding: SecretEncoding; copy: string[]; keys: SigningKey[] }>();

let lastString: string | undefined;
let lastEncoding: SecretEncoding | undefined;
let lastKeys: SigningKey[] = [];

export function resolveKeys(secrets: unknown, encoding: SecretEncoding): SigningKey[] {
  if (typeof secrets === 'string') {
    // Most processes verify with one configuration: one comparison, no hashing.
    if (secrets === lastString && encoding === lastEncoding) return lastKeys;
    const cacheKey = encoding === 'utf8' ? `u${secrets}` : `h${secrets}`;
    let keys = byString.get(cacheKey);
    if (keys === undefined) {
      keys = toSigningKeys(secrets, encoding);
      if (byString.size >= MAX_CACHED_STRINGS) byString.clear();
      byString.set(cacheKey, keys);
    }
    lastString = secrets;
    lastEncoding = encoding;
    lastKeys = keys;
    return keys;
  }
  if (Array.isArray(secrets)) {
    const cached = byArray.get(secrets);
    if (cached !== undefined && cached.encoding === encoding && sameStrings(cached.copy, secrets)) {
      return cached.keys;
    }
    const keys = toSigningKeys(secrets, encoding);
    byArray.set(secrets, { encoding, copy: [...(secrets as string[])], keys });
    return keys;
  }
  return toSigningKeys(secrets, encoding);
}

function sameStrings(a: readonly string[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
