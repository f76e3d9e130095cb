import type { AnyWebhookEvent } from '../events/types.js';
import { describeThrown } from '../shared/thrown.js';

/**
 * One or more handlers of a delivery failed. `errors` holds each failure; `event` is the event
 * they were handling. Adapters answer 500.
 */
export class WebhookHandlerError extends AggregateError {
  override readonly name = 'WebhookHandlerError';
  readonly code = 'handler_failed';
  readonly status = 500;
  readonly event: AnyWebhookEvent;

  constructor(event: AnyWebhookEvent, errors: unknown[]) {
    super(errors, `${errors.length} handler${errors.length === 1 ? '' : 's'} failed for ${event.action}: ${errors.map(describeThrown).join('; ')}`);
    this.event = event;
  }
}
