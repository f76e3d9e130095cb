import type { Digest, HmacBackend } from '../crypto/backend.js';
import { getNodeBackend } from '../crypto/node-backend.js';
import { getDefaultBackend } from '../crypto/index.js';
import { mismatchCandidates, mismatchError, type MismatchCandidate } from './mismatch.js';
import { digestMatches, parseHeaderInternal, type ParsedHeaderInternal, type SignatureHeaderInput } from './parse-header.js';
import { toRawPayload, type RawPayload } from './payload.js';
import { alternatesOf, keysOf } from './keyring.js';
import { assertSecretEncoding, type SecretEncoding, type SecretsInput, type SigningKey } from './secrets.js';
import { assertInsideWindow, resolveNow, resolveTolerance } from './timestamp.js';
import type { WebhookVerificationError } from './errors.js';

/** Options of {@link verify} and {@link verifySync}. */
export interface VerifyOptions {
  /**
   * One key, several, or the rack parameter's `"new,old"` comma-separated form. Keys in a string
   * are trimmed, as the rack trims its parameter; keys in an array are used byte for byte.
   */
  secrets: SecretsInput;
  /**
   * Seconds either side of now; `0` = the same second; `Infinity` turns the check off. `NaN` or a
   * negative value is a `RangeError`.
   *
   * @defaultValue `300` ({@link DEFAULT_TOLERANCE_SECONDS})
   */
  tolerance?: number;
  /**
   * Unix seconds to judge the timestamp against (re-verifying stored payloads).
   *
   * @defaultValue the clock, `Date.now() / 1000`
   */
  now?: number;
  /**
   * How the configured key becomes HMAC key bytes: `'utf8'` uses the key text, as the spec says;
   * `'hex'` hex-decodes it, as deployed racks do. Set, it means exactly that.
   *
   * @defaultValue not set: each key is tried as UTF-8 (the spec), and a key shaped like a deployed
   * rack's (even-length lowercase hex, 64 characters or more) also hex-decoded, only when UTF-8 did not match
   */
  secretEncoding?: SecretEncoding;
}

/** What a successful verification found. */
export interface VerifiedSignature {
  /** The header's `t`: unix seconds of dispatch. */
  timestamp: number;
  /** Which of the receiver's secrets matched: once an old key stops matching, it can go. */
  secretIndex: number;
  /** How that secret was used: as UTF-8 text (the spec) or hex-decoded (a deployed rack). */
  secretEncoding: SecretEncoding;
}

/**
 * The keys to try. `keys` are the secrets under `encoding` (explicit, or UTF-8 when not set);
 * `alternates`, only when `secretEncoding` was not set, the same secrets hex-decoded (a function
 * when they are made only on a mismatch: a one-off call that matches never pays for them).
 * `alternatesFirst` when the deployed form is the more likely (a vendor-named header).
 */
export interface KeyChoice {
  readonly keys: readonly SigningKey[];
  readonly encoding: SecretEncoding;
  readonly alternates: readonly SigningKey[] | (() => readonly SigningKey[]) | undefined;
  readonly alternatesFirst?: boolean;
}

interface PreparedVerification extends KeyChoice {
  readonly body: Uint8Array | string;
  readonly header: ParsedHeaderInternal;
  readonly tolerance: number;
  readonly now: number;
}

/**
 * Everything that can fail before any HMAC is computed, in the order a user would fix it.
 * `rememberKeys` where deriving a key costs more than remembering it (Web Crypto; see keysOf).
 */
function prepare(
  payload: unknown,
  header: SignatureHeaderInput,
  options: VerifyOptions | undefined,
  rememberKeys: boolean,
): PreparedVerification {
  // Untyped callers may leave the options out: that is "no secrets", not a TypeError.
  const explicit = options?.secretEncoding;
  if (explicit !== undefined) assertSecretEncoding(explicit);
  const encoding = explicit ?? 'utf8';
  const tolerance = resolveTolerance(options?.tolerance);
  const now = resolveNow(options?.now);
  const keys = keysOf(options, encoding, rememberKeys);
  const body = toRawPayload(payload);
  const alternates = explicit === undefined ? alternatesOf(keys, rememberKeys) : undefined;
  return { keys, encoding, alternates, alternatesFirst: false, body, header: parseHeaderInternal(header), tolerance, now };
}

function triedAlternates(choice: KeyChoice): readonly SigningKey[] {
  return choice.alternates === undefined ? [] : typeof choice.alternates === 'function' ? choice.alternates() : choice.alternates;
}

function matchesAny(digest: Digest, header: ParsedHeaderInternal): boolean {
  let matched = false;
  // Every v1 is compared even after a match, as the contract says.
  for (const offset of header.signatureOffsets) matched = digestMatches(digest, header.source, offset) || matched;
  return matched;
}

function accept(prepared: PreparedVerification, key: SigningKey): VerifiedSignature {
  assertInsideWindow(prepared.header.timestamp, prepared.tolerance, prepared.now);
  return { timestamp: prepared.header.timestamp, secretIndex: key.index, secretEncoding: key.encoding };
}

function mismatch(prepared: PreparedVerification, matched: MismatchCandidate | undefined): WebhookVerificationError {
  const { keys, header, encoding } = prepared;
  return mismatchError(keys, header.signatureOffsets.length, encoding, header.timestamp, matched, triedAlternates(prepared).length > 0);
}

type SyncBackend = HmacBackend & { hmacSync: NonNullable<HmacBackend['hmacSync']> };

function findSync(backend: SyncBackend, candidates: readonly SigningKey[], header: ParsedHeaderInternal, body: Uint8Array | string) {
  for (let i = 0; i < candidates.length; i++) {
    if (matchesAny(backend.hmacSync(candidates[i]!, header.timestampText, body), header)) return candidates[i];
  }
  return undefined;
}

/**
 * The keys are tried in the likelier form first; the other form only when that did not match, so
 * a one-off call that matches never makes the hex-decoded candidates.
 */
function verifyPreparedSync(backend: SyncBackend, prepared: PreparedVerification): VerifiedSignature {
  const { keys, header, body } = prepared;
  const deployedFirst = prepared.alternatesFirst === true;
  const key =
    findSync(backend, deployedFirst ? triedAlternates(prepared) : keys, header, body) ??
    findSync(backend, deployedFirst ? keys : triedAlternates(prepared), header, body);
  if (key !== undefined) return accept(prepared, key);
  const matched = mismatchCandidates(keys, prepared.encoding, triedAlternates(prepared)).find((candidate) =>
    matchesAny(backend.hmacSync(candidate.key, header.timestampText, body), header),
  );
  throw mismatch(prepared, matched);
}

async function verifyPreparedAsync(backend: HmacBackend, prepared: PreparedVerification): Promise<VerifiedSignature> {
  const { keys, header, body } = prepared;
  const alternates = triedAlternates(prepared);
  for (const key of prepared.alternatesFirst === true ? [...alternates, ...keys] : [...keys, ...alternates]) {
    if (matchesAny(await backend.hmac(key, header.timestampText, body), header)) return accept(prepared, key);
  }
  for (const candidate of mismatchCandidates(keys, prepared.encoding, alternates)) {
    if (matchesAny(await backend.hmac(candidate.key, header.timestampText, body), header)) throw mismatch(prepared, candidate);
  }
  throw mismatch(prepared, undefined);
}

/** Exposed for the test suite, which runs every vector through every backend. */
export function verifyWithBackend(
  backend: HmacBackend,
  payload: RawPayload,
  header: SignatureHeaderInput,
  options: VerifyOptions,
): Promise<VerifiedSignature> {
  try {
    const prepared = prepare(payload, header, options, backend.hmacSync === undefined);
    if (backend.hmacSync !== undefined) {
      // On Node the HMAC is synchronous, so the promise costs one allocation, not a thread hop.
      return Promise.resolve(verifyPreparedSync(backend as Parameters<typeof verifyPreparedSync>[0], prepared));
    }
    return verifyPreparedAsync(backend, prepared);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Verifies a delivery: HMAC-SHA256 over `${t}.` and the raw body, compared in constant time
 * against every `v1` segment with every secret; then the time window. Works on every runtime.
 *
 * @param payload - The request body exactly as received: a string, `Buffer`, `Uint8Array` or `ArrayBuffer`, never a parsed object.
 * @param header - The `Service-Signature` header value (`t=…,v1=…`); `undefined` or an array as a framework hands it over.
 * @param options - The keys and the time window.
 * @returns The header's timestamp and which secret matched.
 * @throws {@link WebhookVerificationError} (the promise rejects) with a `code` and the HTTP `status` to answer with.
 *
 * @example
 * ```ts
 * import { verify, WebhookVerificationError } from 'rack-webhooks';
 *
 * try {
 *   const { timestamp, secretIndex } = await verify(rawBody, headers['service-signature'], {
 *     secrets: process.env.RACK_WEBHOOK_SECRETS!, // "new,old" during a key rotation
 *   });
 * } catch (error) {
 *   if (error instanceof WebhookVerificationError) console.log(error.status, error.code); // 401 'signature_mismatch'
 * }
 * ```
 */
export function verify(payload: RawPayload, header: SignatureHeaderInput, options: VerifyOptions): Promise<VerifiedSignature> {
  return verifyWithBackend(getDefaultBackend(), payload, header, options);
}

/**
 * {@link verify} without the promise. Needs `node:crypto` (Node 20.16+, Bun, Deno); elsewhere it
 * throws an `Error` that says to use `verify`.
 *
 * @param payload - The request body exactly as received: a string, `Buffer`, `Uint8Array` or `ArrayBuffer`.
 * @param header - The `Service-Signature` header value.
 * @param options - The keys and the time window.
 * @returns The header's timestamp and which secret matched.
 * @throws {@link WebhookVerificationError} with a `code` and the HTTP `status` to answer with.
 *
 * @example
 * ```ts
 * import { verifySync } from 'rack-webhooks';
 *
 * const { secretIndex } = verifySync(rawBody, headers['service-signature'], { secrets: 'new-key,old-key' });
 * if (secretIndex === 1) console.log('the rack still signs with the old key');
 * ```
 */
export function verifySync(payload: RawPayload, header: SignatureHeaderInput, options: VerifyOptions): VerifiedSignature {
  const backend = requireSyncBackend('verifySync');
  return verifyPreparedSync(backend, prepare(payload, header, options, false));
}

/**
 * The receiver's path: keys, encoding and tolerance were resolved when it was created, the body
 * has been through `toRawPayload`, and the header was found (and parsed, so that an unsigned
 * delivery is reported with what the receiver saw).
 */
/**
 * The fields one by one, with one shape for every call: spreading `choice` and adding to the copy
 * cost a quarter of a receive() in V8.
 */
function prepared(
  choice: KeyChoice,
  body: Uint8Array | string,
  header: ParsedHeaderInternal,
  tolerance: number,
  now: number,
): PreparedVerification {
  return {
    keys: choice.keys,
    encoding: choice.encoding,
    alternates: choice.alternates,
    alternatesFirst: choice.alternatesFirst === true,
    body,
    header,
    tolerance,
    now,
  };
}

export function verifyResolvedSync(
  choice: KeyChoice,
  tolerance: number,
  now: number,
  body: Uint8Array | string,
  header: ParsedHeaderInternal,
): VerifiedSignature {
  const backend = requireSyncBackend('verifySync');
  return verifyPreparedSync(backend, prepared(choice, body, header, tolerance, now));
}

/** `verifyResolvedSync` where only the async backend exists (Web Crypto): the receiver's path there. */
export function verifyResolved(
  choice: KeyChoice,
  tolerance: number,
  now: number,
  body: Uint8Array | string,
  header: ParsedHeaderInternal,
): Promise<VerifiedSignature> {
  try {
    return verifyPreparedAsync(getDefaultBackend(), prepared(choice, body, header, tolerance, now));
  } catch (error) {
    return Promise.reject(error);
  }
}

export function requireSyncBackend(caller: string): HmacBackend & { hmacSync: NonNullable<HmacBackend['hmacSync']> } {
  const nodeBackend = getNodeBackend();
  if (nodeBackend?.hmacSync === undefined) {
    throw new Error(
      `rack-webhooks: ${caller} needs node:crypto (Node 20.16+, Bun or Deno); ` +
        'on this runtime use the async variant, which runs on Web Crypto.',
    );
  }
  return nodeBackend as HmacBackend & { hmacSync: NonNullable<HmacBackend['hmacSync']> };
}
