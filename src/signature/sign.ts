import type { Digest, HmacBackend } from '../crypto/backend.js';
import { getDefaultBackend } from '../crypto/index.js';
import { MAX_SIGNING_SECRETS, MAX_TIMESTAMP_DIGITS } from './limits.js';
import { toRawPayload, type RawPayload } from './payload.js';
import { keysOf } from './keyring.js';
import { assertSecretEncoding, type SecretEncoding, type SecretsInput, type SigningKey } from './secrets.js';
import { requireSyncBackend } from './verify.js';

/** Options of {@link sign} and {@link signSync}. */
export interface SignOptions {
  /** 1 to 4 keys, as the rack accepts: one `v1` segment is written per key. More is a `RangeError`. */
  secrets: SecretsInput;
  /**
   * Unix seconds to put in `t`, a whole number from 0 to 999,999,999,999,999 (15 digits, the most
   * a verifier's header parser takes); anything else is a `RangeError`.
   *
   * @defaultValue now, `Math.floor(Date.now() / 1000)`
   */
  timestamp?: number;
  /**
   * How each key becomes HMAC key bytes: `'utf8'` (the spec) or `'hex'`.
   *
   * @defaultValue `'utf8'`
   */
  secretEncoding?: SecretEncoding;
}

interface PreparedSignature {
  readonly keys: SigningKey[];
  readonly body: Uint8Array | string;
  readonly timestampText: string;
}

/** The largest `t` a verifier takes: the header parser's digit bound. */
const MAX_TIMESTAMP = 10 ** MAX_TIMESTAMP_DIGITS - 1;

/** `rememberKeys` where deriving a key costs more than remembering it (Web Crypto; see keysOf). */
function prepare(payload: unknown, options: SignOptions | undefined, rememberKeys: boolean): PreparedSignature {
  const encoding = options?.secretEncoding ?? 'utf8';
  assertSecretEncoding(encoding);
  const keys = keysOf(options, encoding, rememberKeys);
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
  const prepared = prepare(payload, options, backend.hmacSync === undefined);
  const digests = await Promise.all(prepared.keys.map((key) => backend.hmac(key, prepared.timestampText, prepared.body)));
  return header(prepared, digests, backend);
}

/**
 * Signs a body the way the rack does and returns the signature header value,
 * `t=<unix seconds>,v1=<64 hex>[,v1=…]` with one `v1` per key. Works on every runtime.
 *
 * @param payload - The exact body that will be sent: a string (hashed as UTF-8), `Buffer`, `Uint8Array` or `ArrayBuffer`.
 * @param options - The keys (1 to 4) and the timestamp.
 * @returns The `Service-Signature` header value.
 *
 * @example
 * ```ts
 * import { sign } from 'rack-webhooks';
 *
 * const body = JSON.stringify({ action: 'app:budget:cap', status: 'success', timestamp: new Date().toISOString(), data: {} });
 * const signature = await sign(body, { secrets: 'test-key' });
 * await fetch('http://127.0.0.1:3000/webhooks', {
 *   method: 'POST',
 *   headers: { 'content-type': 'application/json', 'service-signature': signature },
 *   body,
 * });
 * ```
 */
export function sign(payload: RawPayload, options: SignOptions): Promise<string> {
  return signWithBackend(getDefaultBackend(), payload, options);
}

/**
 * {@link sign} without the promise. Needs `node:crypto` (Node 20.16+, Bun, Deno).
 *
 * @param payload - The exact body that will be sent.
 * @param options - The keys (1 to 4) and the timestamp.
 * @returns The `Service-Signature` header value.
 *
 * @example
 * ```ts
 * import { signSync, verifySync } from 'rack-webhooks';
 *
 * const body = '{"action":"app:create","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{}}';
 * const header = signSync(body, { secrets: ['new-key', 'old-key'], timestamp: 1_777_285_800 });
 * verifySync(body, header, { secrets: 'old-key', now: 1_777_285_800 }); // { timestamp: 1777285800, secretIndex: 0, secretEncoding: 'utf8' }
 * ```
 */
export function signSync(payload: RawPayload, options: SignOptions): string {
  const backend = requireSyncBackend('signSync');
  const prepared = prepare(payload, options, false);
  return header(
    prepared,
    prepared.keys.map((key) => backend.hmacSync(key, prepared.timestampText, prepared.body)),
    backend,
  );
}
