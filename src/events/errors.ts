import { WebhookError } from '../shared/webhook-error.js';

export type WebhookPayloadErrorCode = 'invalid_json' | 'invalid_event';

/**
 * The body verified (or was not checked) but is not a usable event. `path` is a JSON pointer to
 * the offending field (`/data/dropped`), empty for the whole body. Messages name fields and
 * rules, never values: bodies may carry customer data.
 */
export class WebhookPayloadError extends WebhookError {
  override readonly name = 'WebhookPayloadError';
  readonly code: WebhookPayloadErrorCode;
  readonly status = 400;
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

export function isWebhookPayloadError(value: unknown): value is WebhookPayloadError {
  return value instanceof WebhookPayloadError;
}
