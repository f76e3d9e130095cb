import { hexAlternates, toSigningKeys, type SecretEncoding, type SigningKey } from './secrets.js';

/**
 * The keys of a one-off `verify` or `sign` call. Nothing is cached module-wide: keys are
 * remembered only against the caller's own options object (a WeakMap entry, gone with that object)
 * and re-checked against its current `secrets` and encoding on every call. A caller that reuses
 * one options object skips re-encoding its keys; one that builds them inline pays a split and an
 * encode per call; a receiver prepares its own keys once, at createReceiver, and never comes here.
 */
interface Remembered {
  readonly secrets: unknown;
  /** An array's elements when its keys were made: the caller may have changed them since. */
  readonly elements: readonly unknown[] | undefined;
  readonly encoding: SecretEncoding;
  readonly keys: SigningKey[];
}

const byOptions = new WeakMap<object, Remembered>();

export function keysOf(options: { readonly secrets?: unknown } | undefined, encoding: SecretEncoding): SigningKey[] {
  const secrets = options?.secrets;
  if (typeof options !== 'object' || options === null) return toSigningKeys(secrets, encoding);
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

function sameElements(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const alternatesByKeys = new WeakMap<readonly SigningKey[], SigningKey[]>();

/**
 * The hex-decoded candidates of keys used as UTF-8 (secretEncoding not set), made on the first
 * mismatch and then kept as long as the keys are: a caller reusing one options object pays once.
 */
export function alternatesOf(keys: readonly SigningKey[]): SigningKey[] {
  let alternates = alternatesByKeys.get(keys);
  if (alternates === undefined) {
    alternates = hexAlternates(keys);
    alternatesByKeys.set(keys, alternates);
  }
  return alternates;
}
