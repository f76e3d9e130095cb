import type { WEBHOOK_ACTIONS, WebhookEventMap } from '../generated/catalog.js';
import type { WebhookEvent } from '../generated/events.js';

/** Every action this version of the SDK knows. */
export type WebhookAction = (typeof WEBHOOK_ACTIONS)[number];

/** The exact event type of one action: `EventOf<'app:budget:cap'>`. */
export type EventOf<A extends WebhookAction> = WebhookEventMap[A];

/**
 * An event whose action this SDK does not know (a newer rack). It is kept apart from
 * `WebhookEvent`, so that a `switch (event.action)` on known events still narrows exactly:
 * use `isKnownEvent` first.
 */
export interface UnknownWebhookEvent {
  /** An action outside {@link WEBHOOK_ACTIONS}. */
  action: string;
  /** The outcome as sent. */
  status: string;
  /** When the event happened, as sent (RFC 3339). */
  timestamp: string;
  /** The event's fields as sent, unchecked. */
  data: { [field: string]: unknown };
}

/** What `parseEvent` returns: a known event, or an unknown one that must be ignored gracefully. */
export type AnyWebhookEvent = WebhookEvent | UnknownWebhookEvent;
