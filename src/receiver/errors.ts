import type { AnyWebhookEvent } from '../events/types.js';

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
    super(errors, `${errors.length} handler${errors.length === 1 ? '' : 's'} failed for ${event.action}: ${errors.map(describeFailure).join('; ')}`);
    this.event = event;
  }
}

/**
 * A handler may throw anything: a value without a usable string form (a null-prototype object, a
 * Symbol, a throwing toString) must still become this error, or the claims stay held and onError
 * never hears of it.
 */
function describeFailure(failure: unknown): string {
  try {
    return failure instanceof Error ? String(failure.message) : String(failure);
  } catch {
    return `a thrown ${typeof failure} with no string form`;
  }
}
