import type { AnyWebhookEvent } from '../events/types.js';
import { describeThrown } from '../shared/thrown.js';
import { WebhookError } from '../shared/webhook-error.js';

/**
 * One or more handlers of a delivery failed. `errors` holds each failure (as an AggregateError's
 * would); `event` is the event they were handling. Adapters answer 500.
 */
export class WebhookHandlerError extends WebhookError {
  override readonly name = 'WebhookHandlerError';
  readonly code = 'handler_failed';
  readonly status = 500;
  /** Typed as AggregateError types it (this class extended AggregateError before), so code written against it still compiles. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly errors: any[];
  readonly event: AnyWebhookEvent;

  constructor(event: AnyWebhookEvent, errors: unknown[]) {
    super(`${errors.length} handler${errors.length === 1 ? '' : 's'} failed for ${event.action}: ${errors.map(describeThrown).join('; ')}`);
    this.errors = [...errors];
    this.event = event;
  }
}
