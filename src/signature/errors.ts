import { WebhookError } from '../shared/webhook-error.js';
import type { RackKeyProblem } from './rack-key-checks.js';

/**
 * Every way a delivery can fail verification, as fixed by the public contract.
 * The first group is the sender's (or an attacker's) problem; the last three are the
 * receiver's own configuration or wiring and can never be fixed by the rack.
 */
export type WebhookVerificationErrorCode =
  | 'missing_header'
  | 'malformed_header'
  | 'header_too_large'
  | 'no_v1_signatures'
  | 'too_many_signatures'
  | 'signature_mismatch'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'payload_not_raw'
  | 'no_secrets'
  | 'invalid_secret';

const RECEIVER_SIDE_CODES: ReadonlySet<WebhookVerificationErrorCode> = /* @__PURE__ */ new Set([
  'payload_not_raw',
  'no_secrets',
  'invalid_secret',
]);

/** What a {@link WebhookVerificationError} knows besides its code, when the check got that far. */
export interface WebhookVerificationErrorDetails {
  /** The header's `t`, when the header got far enough to have one. */
  readonly timestamp?: number;
  /** Seconds between `t` and the clock, for the two time-window codes (always positive). */
  readonly skewSeconds?: number;
  /** The tolerance the timestamp was judged against, for the two time-window codes. */
  readonly tolerance?: number;
  /** Set on `signature_mismatch` when the other key encoding would have matched. */
  readonly suggestedSecretEncoding?: 'utf8' | 'hex';
  /** The header the signature was read from (a receiver's refusal), as the request named it. */
  readonly headerName?: string;
  /** The names (never the values) of every header the request carried (a receiver's refusal). */
  readonly headerNames?: readonly string[];
  /** Set when the signature was under another name than the configured `headerName`. */
  readonly suggestedHeaderName?: string;
  /** For `missing_header`: every reason a rack sends a delivery unsigned, most specific first. */
  readonly unsignedCauses?: readonly string[];
  /** For `missing_header`: the receiver's own keys that a deployed rack would refuse, turning signing off. */
  readonly rackKeyProblems?: readonly RackKeyProblem[];
}

/**
 * The single error class of verification. `status` is the HTTP status a receiver should answer
 * with: 401 for anything the request did wrong, 500 for the receiver's own misconfiguration
 * (a missing key, a parsed body), because a 401 there would send on-call looking at the rack.
 */
export class WebhookVerificationError extends WebhookError {
  /** Always `'WebhookVerificationError'`. */
  override readonly name = 'WebhookVerificationError';
  /** Why verification failed; stable, for programs (the message is for people). */
  readonly code: WebhookVerificationErrorCode;
  /** The HTTP status to answer with: 401, or 500 for `payload_not_raw`, `no_secrets` and `invalid_secret`. */
  readonly status: 401 | 500;
  /** The header's `t` in unix seconds, when the header got far enough to have one. */
  readonly timestamp: number | undefined;
  /** Seconds between `t` and the clock, for `timestamp_too_old` and `timestamp_too_new` (always positive). */
  readonly skewSeconds: number | undefined;
  /** The tolerance in seconds the timestamp was judged against, for the two time-window codes. */
  readonly tolerance: number | undefined;
  /** Set on `signature_mismatch` when the other `secretEncoding` would have matched. */
  readonly suggestedSecretEncoding: 'utf8' | 'hex' | undefined;
  /** The header the signature was read from, as the request named it (refusals by a receiver). */
  readonly headerName: string | undefined;
  /** The names of every header the request carried, never their values (refusals by a receiver). */
  readonly headerNames: readonly string[] | undefined;
  /** Set when a `t=…,v1=…` header was present under another name than the configured `headerName`. */
  readonly suggestedHeaderName: string | undefined;
  /** For `missing_header`: every reason a rack sends unsigned, the receiver's own key problems first. */
  readonly unsignedCauses: readonly string[] | undefined;
  /** For `missing_header`: which of the receiver's keys a deployed rack would refuse (which turns its signing off). */
  readonly rackKeyProblems: readonly RackKeyProblem[] | undefined;

  constructor(code: WebhookVerificationErrorCode, message: string, details: WebhookVerificationErrorDetails = {}) {
    super(message);
    this.code = code;
    this.status = RECEIVER_SIDE_CODES.has(code) ? 500 : 401;
    this.timestamp = details.timestamp;
    this.skewSeconds = details.skewSeconds;
    this.tolerance = details.tolerance;
    this.suggestedSecretEncoding = details.suggestedSecretEncoding;
    this.headerName = details.headerName;
    this.headerNames = details.headerNames;
    this.suggestedHeaderName = details.suggestedHeaderName;
    this.unsignedCauses = details.unsignedCauses;
    this.rackKeyProblems = details.rackKeyProblems;
  }
}

/** True for a {@link WebhookVerificationError} (an `instanceof` check, usable as a type guard). */
export function isWebhookVerificationError(value: unknown): value is WebhookVerificationError {
  return value instanceof WebhookVerificationError;
}
