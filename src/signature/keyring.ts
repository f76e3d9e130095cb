import { hexAlternates, toSigningKeys, type SecretEncoding, type SigningKey } from './secrets.js';

/**
 * The keys of a one-off `verify` or `sign` call. Nothing is cached module-wide. On node:crypto the
 * keys are made afresh on every call and dropped when it returns: splitting and encoding a key
 * costs less than remembering it (a WeakMap entry per options object cost a one-off call written
 * as the quick start writes it, with a new options object each time, half again its time, most of
 * it in the garbage collector). Where only Web Crypto exists, importing a key costs more than a
 * WeakMap entry, so the keys are remembered against the caller's own options object (gone with that
 * object) and re-checked against its current `secrets` and encoding on every call. A receiver
 * prepares its own keys once, at createReceiver, and never comes here.
 */
interface Remembered {
  readonly secrets: unknown;
  /** An array's elements when its keys were made: the caller may have changed them since. */
  readonly elements: readonly unknown[] | undefined;
  readonly encoding: SecretEncoding;
  readonly keys: SigningKey[];
}

const byOptions = new WeakMap<object, Remembered>();

export function keysOf(options: { readonly secrets?: unknown } | undefined, encoding: SecretEncoding, remember: boolean): SigningKey[] {
  const secrets = options?.secrets;
  if (!remember || typeof options !== 'object' || options === null) return oneKeyOf(secrets, encoding) ?? toSigningKeys(secrets, encoding);
  const remembered = byOptions.get(options);
  if (
    remembered !== undefined &&
    remembered.secrets === secrets &&
    remembered.encoding === encoding &&
    (remembered.elements === undefined || sameElements(remembered.elements, secrets as readonly unknown[]))
  ) {
    return remembered.keys;
  }
  const keys = toSigningKeys(secrets, encoding);
  byOptions.set(options, { secrets, elements: Array.isArray(secrets) ? [...(secrets as unknown[])] : undefined, encoding, keys });
  return keys;
}

/**
 * The quick start's case, made without the general path's split, map and TextEncoder (a call into
 * C++ and an ArrayBuffer on Node 20): one key as text, printable ASCII with no comma, so splitting
 * and trimming would leave it as it is and its UTF-8 bytes are its char codes. Anything else:
 * undefined, for toSigningKeys. Here rather than in toSigningKeys, which a receiver runs once.
 */
function oneKeyOf(secrets: unknown, encoding: SecretEncoding): SigningKey[] | undefined {
  if (typeof secrets !== 'string' || encoding !== 'utf8' || secrets.length === 0 || secrets.length > 256) return undefined;
  const bytes = new Uint8Array(secrets.length);
  for (let i = 0; i < secrets.length; i++) {
    const code = secrets.charCodeAt(i);
    if (code <= 0x20 || code >= 0x7f || code === 0x2c) return undefined;
    bytes[i] = code;
  }
  return [{ source: secrets, bytes, index: 0, encoding }];
}

function sameElements(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const alternatesByKeys = new WeakMap<readonly SigningKey[], SigningKey[]>();

/**
 * The hex-decoded candidates of keys used as UTF-8 (secretEncoding not set), made on the first
 * mismatch. Remembered keys keep theirs as long as the keys live; keys made for one call make them
 * for that call only.
 */
export function alternatesOf(keys: readonly SigningKey[], remember: boolean): () => SigningKey[] {
  let alternates: SigningKey[] | undefined;
  return () => {
    if (alternates !== undefined) return alternates;
    alternates = remember ? alternatesByKeys.get(keys) : undefined;
    if (alternates === undefined) {
      alternates = hexAlternates(keys);
      if (remember) alternatesByKeys.set(keys, alternates);
    }
    return alternates;
  };
}
