export { createReceiver, DEFAULT_HEADER_NAME } from './create-receiver.js';
export type { AnyReceiver, ErrorHandler, Receiver, ReceiveOptions, RefusalOptions } from './types.js';
export type { ReceiveTraceMessage, RefusalMessage } from './channels.js';
export { WebhookHandlerError } from './errors.js';
export { getHeader } from './headers.js';
export type { HeadersInput } from './headers.js';
export type { ActionPattern, EventForPattern, EventHandler } from './patterns.js';
export type { Delivery, ReceiveOutcome, ReceiveResult, ReceiverLogEvent, ReceiverLogRecord, ReceiverOptions } from './types.js';
export type {
  DeliveryInbox,
  DeliveryToStore,
  HandlerContext,
  InboxConnection,
  InboxHandlerContext,
  ReceiverConnection,
  ReceiverRuntime,
  StoreDeliveryOptions,
  StoredRow,
} from './inbox-contract.js';
