import type { Digest, HmacBackend } from '../crypto/backend.js';
import { getDefaultBackend } from '../crypto/index.js';
import { resolveKeys } from './keyring.js';
import { MAX_SIGNING_SECRETS, MAX_TIMESTAMP_DIGITS } from './limits.js';
import { toRawPayload, type RawPayload } from './payload.js';
import { assertSecretEncoding, type SecretEncoding, type SecretsInput, type SigningKey } from './secrets.js';
import { requireSyncBackend } from './verify.js';

export interface SignOptions {
  /** 1 to 4 keys, as the rack accepts: one `v1` segment is written per key. */
  secrets: SecretsInput;
  /** Unix seconds to put in `t`; default now. */
  timestamp?: number;
  secretEncoding?: SecretEncoding;
}

interface PreparedSignature {
  readonly keys: SigningKey[];
  readonly body: Uint8Array | string;
  readonly timestampText: string;
}

/** The largest `t` a verifier takes: the header parser's digit bound. */
const MAX_TIMESTAMP = 10 ** MAX_TIMESTAMP_DIGITS - 1;

function prepare(payload: unknown, options: SignOptions | undefined): PreparedSignature {
  const encoding = options?.secretEncoding ?? 'utf8';
  assertSecretEncoding(encoding);
  const keys = resolveKeys(options?.secrets, encoding);
  if (keys.length > MAX_SIGNING_SECRETS) {
    throw new RangeError(
      `sign takes at most ${MAX_SIGNING_SECRETS} secrets, got ${keys.length}: the rack rejects more than ${MAX_SIGNING_SECRETS} active keys.`,
    );
  }
  const timestamp = options?.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0 || timestamp > MAX_TIMESTAMP) {
    // Past 15 digits no verifier (this one included) would take the header.
    throw new RangeError(`timestamp must be a whole number of unix seconds from 0 to ${MAX_TIMESTAMP}, got ${String(timestamp)}`);
  }
  return { keys, body: toRawPayload(payload), timestampText: String(timestamp) };
}

function header(prepared: PreparedSignature, digests: readonly Digest[], backend: HmacBackend): string {
  return `t=${prepared.timestampText}` + digests.map((digest) => `,v1=${backend.encodeHex(digest)}`).join('');
}

export async function signWithBackend(backend: HmacBackend, payload: RawPayload, options: SignOptions): Promise<string> {
  const prepared = prepare(payload, options);
  const digests = await Promise.all(
    prepared.keys.map((key) => backend.hmac(key, prepared.timestampText, prepared.body)),
  );
  return header(prepared, digests, backend);
}

/** Signs a body the way the rack does and returns the signature header value. */
export function sign(payload: RawPayload, options: SignOptions): Promise<string> {
  return signWithBackend(getDefaultBackend(), payload, options);
}

/** `sign` without the promise. Needs node:crypto (Node 20.16+, Bun, Deno). */
export function signSync(payload: RawPayload, options: SignOptions): string {
  const backend = requireSyncBackend('signSync');
  const prepared = prepare(payload, options);
  return header(
    prepared,
    prepared.keys.map((key) => backend.hmacSync(key, prepared.timestampText, prepared.body)),
    backend,
  );
}
