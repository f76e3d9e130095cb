import type { AnyWebhookEvent } from '../events/types.js';
import { describeThrown } from '../shared/thrown.js';

/**
 * One or more handlers of a delivery failed. `errors` holds each failure; `event` is the event
 * they were handling. Adapters answer 500.
 */
export class WebhookHandlerError extends AggregateError {
  /** Always `'WebhookHandlerError'`. */
  override readonly name = 'WebhookHandlerError';
  /** Always `'handler_failed'`. */
  readonly code = 'handler_failed';
  /** The HTTP status adapters answer with: always 500. */
  readonly status = 500;
  /** The event the failed handlers were handling. */
  readonly event: AnyWebhookEvent;

  constructor(event: AnyWebhookEvent, errors: unknown[]) {
    super(errors, `${errors.length} handler${errors.length === 1 ? '' : 's'} failed for ${event.action}: ${errors.map(describeThrown).join('; ')}`);
    this.event = event;
  }
}
