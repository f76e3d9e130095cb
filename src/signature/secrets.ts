import type { HmacKey } from '../crypto/backend.js';
import { WebhookVerificationError } from './errors.js';
import { hexToBytes, isHex } from '../shared/hex.js';
import { isRackShapedKey } from './rack-key-shape.js';

/** How a configured key becomes HMAC key bytes: its UTF-8 text (the spec), or hex-decoded. */
export type SecretEncoding = 'utf8' | 'hex';

/** One key, several, or the rack parameter's own `"new,old"` form. */
export type SecretsInput = string | readonly string[];

/** An HMAC key (its bytes under one encoding) with the text it was configured as. */
export interface SigningKey extends HmacKey {
  /** The key as configured (after comma-splitting), kept for diagnostics only. */
  readonly source: string;
  /** Its position among the configured secrets: the `secretIndex` a match reports. */
  readonly index: number;
  /** How `bytes` were made from `source`. */
  readonly encoding: SecretEncoding;
}

const utf8 = new TextEncoder();

export function assertSecretEncoding(encoding: unknown): asserts encoding is SecretEncoding {
  if (encoding !== 'utf8' && encoding !== 'hex') {
    throw new RangeError(`secretEncoding must be 'utf8' or 'hex', got ${JSON.stringify(encoding)}`);
  }
}

/**
 * A string is the rack parameter's form: comma-separated, each key trimmed, as the rack itself
 * splits it. An array is taken byte for byte, so a stray newline in one is reported, not hidden.
 */
export function splitSecrets(secrets: unknown): string[] {
  if (typeof secrets === 'string') {
    if (secrets.trim() === '') throw noSecrets();
    return secrets.split(',').map((part) => part.trim());
  }
  if (Array.isArray(secrets)) {
    if (secrets.length === 0) throw noSecrets();
    return secrets.map((secret, index) => {
      if (typeof secret !== 'string') {
        throw new WebhookVerificationError('invalid_secret', `Secret #${index + 1} is a ${typeof secret}, not a string.`);
      }
      return secret;
    });
  }
  if (secrets === undefined || secrets === null) throw noSecrets();
  throw new WebhookVerificationError(
    'invalid_secret',
    `secrets is ${secrets instanceof Uint8Array ? 'a byte array' : `a ${typeof secrets}`}: pass the key as text (hex for a hex key, ` +
      `with secretEncoding: 'hex'), a "new,old" comma-separated string, or an array of strings.`,
  );
}

export function encodeSecret(secret: string, encoding: SecretEncoding): Uint8Array | undefined {
  if (encoding === 'utf8') return utf8.encode(secret);
  return isHex(secret) ? hexToBytes(secret) : undefined;
}

export function toSigningKeys(secrets: unknown, encoding: SecretEncoding): SigningKey[] {
  return splitSecrets(secrets).map((source, index) => {
    if (source === '') {
      throw new WebhookVerificationError('invalid_secret', `Secret #${index + 1} is empty.`);
    }
    const bytes = encodeSecret(source, encoding);
    if (bytes === undefined) {
      throw new WebhookVerificationError(
        'invalid_secret',
        `Secret #${index + 1} is not an even-length hex string, but secretEncoding is 'hex'. ` +
          `Use secretEncoding: 'utf8' if the rack uses the parameter value as text.`,
      );
    }
    return { source, bytes, index, encoding };
  });
}

/**
 * With `secretEncoding` not set, a key shaped like a deployed rack's (even-length lowercase hex,
 * 64 characters or more) is also tried hex-decoded, as those racks use it. It is the same secret:
 * whoever lacks it can produce a MAC under neither form. Shorter hex keys get no such candidate: a
 * deployed rack refuses them and sends unsigned, so it could never match.
 */
export function hexAlternates(keys: readonly SigningKey[]): SigningKey[] {
  const alternates: SigningKey[] = [];
  for (const key of keys) {
    if (isRackShapedKey(key.source))
      alternates.push({ source: key.source, bytes: hexToBytes(key.source), index: key.index, encoding: 'hex' });
  }
  return alternates;
}

function noSecrets(): WebhookVerificationError {
  return new WebhookVerificationError(
    'no_secrets',
    "No signing secret configured: pass the rack's webhook_signing_key value as `secrets` " +
      '(a string, a "new,old" comma-separated string, or an array).',
  );
}
