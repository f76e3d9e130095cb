import { WebhookError } from '../shared/webhook-error.js';

/**
 * Why a read of the rack's API failed. `rack_auth_invalid`: the credential is wrong (or the rack
 * rotated its token secret); `rack_token_expired`: the token's `expiresAt` has passed;
 * `rack_role_missing`: the credential is valid but lacks the read role; `rack_not_found`: a 404,
 * or the 500 the rack answers for a missing build or release; `rack_failed`: any other answer of
 * 400 or more; `rack_unreachable`: no answer (refused, reset, DNS, TLS); `rack_timeout`: no answer
 * in time; `rack_bad_answer`: an answer that is not the JSON the route returns; `rack_bad_config`:
 * the client was given a bad URL, token or option.
 */
export type RackApiErrorCode =
  | 'rack_auth_invalid'
  | 'rack_token_expired'
  | 'rack_role_missing'
  | 'rack_not_found'
  | 'rack_failed'
  | 'rack_unreachable'
  | 'rack_timeout'
  | 'rack_bad_answer'
  | 'rack_bad_config';

/**
 * A read of the rack's API that failed: `code` for programs, `httpStatus` as the rack answered
 * (undefined without an answer), `route` the path read (never the credentials), and a one-line
 * message that says why. Never holds the token or an answer's body beyond the rack's error line.
 */
export class RackApiError extends WebhookError {
  /** Always `RackApiError`. */
  override readonly name = 'RackApiError';
  readonly code: RackApiErrorCode;
  /** The status a receiver would answer with, as for every WebhookError: 502, the upstream failed. */
  readonly status = 502;
  /** The rack's HTTP status, when it answered. */
  readonly httpStatus: number | undefined;
  /** The route read, such as `/apps/web/builds?limit=50`. */
  readonly route: string;

  constructor(code: RackApiErrorCode, route: string, message: string, options: { httpStatus?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.route = route;
    this.httpStatus = options.httpStatus;
  }
}
