import { WEBHOOK_ACTIONS } from '../generated/catalog.js';
import type { WebhookEvent } from '../generated/events.js';
import type { AnyWebhookEvent, WebhookAction } from './types.js';

const KNOWN_ACTIONS: ReadonlySet<string> = /* @__PURE__ */ new Set(WEBHOOK_ACTIONS);

/** True when `action` is one of the {@link WEBHOOK_ACTIONS} this version of the SDK knows. */
export function isKnownAction(action: unknown): action is WebhookAction {
  return typeof action === 'string' && KNOWN_ACTIONS.has(action);
}

/** Narrows a parsed event to the exact union of known events. */
export function isKnownEvent(event: AnyWebhookEvent): event is WebhookEvent {
  return isKnownAction(event.action);
}
