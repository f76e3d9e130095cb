import type { AnyWebhookEvent } from '../events/types.js';
import { describeThrown } from '../shared/thrown.js';
import { WebhookError } from '../shared/webhook-error.js';

/**
 * One or more handlers of a delivery failed. `errors` holds each failure (as an AggregateError's
 * would); `event` is the event they were handling. Adapters answer 500.
 */
export class WebhookHandlerError extends WebhookError {
  /** Always `'WebhookHandlerError'`. */
  override readonly name = 'WebhookHandlerError';
  /** Always `'handler_failed'`. */
  readonly code = 'handler_failed';
  /** The HTTP status adapters answer with: always 500. */
  readonly status = 500;
  /** Typed as AggregateError types it (this class extended AggregateError before), so code written against it still compiles. */
  readonly errors: any[];
  /** The event the failed handlers were handling. */
  readonly event: AnyWebhookEvent;

  constructor(event: AnyWebhookEvent, errors: unknown[]) {
    super(`${errors.length} handler${errors.length === 1 ? '' : 's'} failed for ${event.action}: ${errors.map(describeThrown).join('; ')}`);
    this.errors = [...errors];
    this.event = event;
  }
}

/**
 * The raw body is gone: a body parser consumed the stream before the webhook route. Raised at
 * once (never a hang, never a 200, never a check over re-serialised JSON), with the fix.
 */
export class WebhookMountError extends WebhookError {
  /** Always `'WebhookMountError'`. */
  override readonly name = 'WebhookMountError';
  /** Always `'raw_body_unavailable'`. */
  readonly code = 'raw_body_unavailable';
  /** The HTTP status adapters answer with: always 500. */
  readonly status = 500;
}
