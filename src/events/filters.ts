import type { WebhookEvent } from '../generated/events.js';
import type { AnyWebhookEvent, EventOf, WebhookAction } from './types.js';

/** Routine, high-volume actions that receivers usually drop (the spec's filtering guidance). */
export const ROUTINE_ACTIONS = [
  'app:budget:auto-shutdown:noop',
  'app:budget:auto-shutdown:simulated',
] as const satisfies readonly WebhookAction[];

/**
 * Actions on-call channels subscribe to. `app:budget:cap` pages only when the app's `atCapAction`
 * is `block-new-deploys` or `auto-shutdown`: deployed racks send it as `data.action`, which the spec
 * does not promise (it is optional in the type).
 */
export const ON_CALL_ACTIONS = [
  'app:budget:auto-shutdown:fired',
  'app:budget:auto-shutdown:failed',
  'app:budget:cap',
] as const satisfies readonly WebhookAction[];

/** Informative only: never act on these. */
export const INFORMATIVE_ACTIONS = ['app:budget:auto-shutdown:flap-suppressed'] as const satisfies readonly WebhookAction[];

/** One of {@link ROUTINE_ACTIONS}. */
export type RoutineAction = (typeof ROUTINE_ACTIONS)[number];
/** One of {@link ON_CALL_ACTIONS}. */
export type OnCallAction = (typeof ON_CALL_ACTIONS)[number];

const routine: ReadonlySet<string> = /* @__PURE__ */ new Set(ROUTINE_ACTIONS);
const onCall: ReadonlySet<string> = /* @__PURE__ */ new Set(ON_CALL_ACTIONS);

/** True for the routine, high-volume events of {@link ROUTINE_ACTIONS} (`:noop`, `:simulated`). */
export function isRoutineEvent(event: AnyWebhookEvent): event is EventOf<RoutineAction> {
  return routine.has(event.action);
}

/** True for the events of {@link ON_CALL_ACTIONS}; narrows to their exact union. */
export function isOnCallEvent(event: AnyWebhookEvent): event is Extract<WebhookEvent, { action: OnCallAction }> {
  return onCall.has(event.action);
}
