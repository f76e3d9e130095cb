export type * from '../generated/events.js';
export { WEBHOOK_ACTIONS, ACTION_DESCRIPTIONS } from '../generated/catalog.js';
export type { WebhookEventMap } from '../generated/catalog.js';
export type { AnyWebhookEvent, EventOf, UnknownWebhookEvent, WebhookAction } from './types.js';
export { WebhookPayloadError, isWebhookPayloadError } from './errors.js';
export type { WebhookPayloadErrorCode } from './errors.js';
export { parseEvent } from './parse-event.js';
export type { EventInput, ParseEventOptions } from './parse-event.js';
export type { EventValidators, ValidateOption } from './validation.js';
export { constructEvent, constructEventSync } from './construct-event.js';
export type { ConstructEventOptions } from './construct-event.js';
export { isKnownAction, isKnownEvent } from './known.js';
export { compareEvents, timestampNanos } from './compare.js';
export {
  INFORMATIVE_ACTIONS,
  ON_CALL_ACTIONS,
  ROUTINE_ACTIONS,
  isOnCallEvent,
  isRoutineEvent,
} from './filters.js';
export type { OnCallAction, RoutineAction } from './filters.js';
