import { WebhookError } from '../shared/webhook-error.js';

/**
 * The dedup store could not answer (Redis down, a timeout). With `dedupFailure: 'closed'` the
 * receiver refuses the delivery with this error; its status, 503, tells a retrying proxy to retry.
 */
export class WebhookDedupError extends WebhookError {
  /** Always `'WebhookDedupError'`. */
  override readonly name = 'WebhookDedupError';
  /** Always `'dedup_unavailable'`. */
  readonly code = 'dedup_unavailable';
  /** The HTTP status to answer with: always 503 (retryable). */
  readonly status = 503;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
