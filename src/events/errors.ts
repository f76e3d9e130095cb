import { WebhookError } from '../shared/webhook-error.js';

/** `invalid_json`: the body is not JSON; `invalid_event`: it is JSON but not a usable event. */
export type WebhookPayloadErrorCode = 'invalid_json' | 'invalid_event';

/**
 * The body verified (or was not checked) but is not a usable event. `path` is a JSON pointer to
 * the offending field (`/data/dropped`), empty for the whole body. Messages name fields and
 * rules, never values: bodies may carry customer data.
 */
export class WebhookPayloadError extends WebhookError {
  /** Always `'WebhookPayloadError'`. */
  override readonly name = 'WebhookPayloadError';
  /** What is wrong with the body; stable, for programs. */
  readonly code: WebhookPayloadErrorCode;
  /** The HTTP status to answer with: always 400. */
  readonly status = 400;
  /** A JSON pointer to the offending field (`/data/dropped`); empty for the whole body. */
  readonly path: string;
  /** The event's action, when the body got far enough to have one. */
  readonly action: string | undefined;

  constructor(code: WebhookPayloadErrorCode, message: string, path = '', action?: string) {
    super(message);
    this.code = code;
    this.path = path;
    this.action = action;
  }
}

/** True for a {@link WebhookPayloadError} (an `instanceof` check, usable as a type guard). */
export function isWebhookPayloadError(value: unknown): value is WebhookPayloadError {
  return value instanceof WebhookPayloadError;
}
