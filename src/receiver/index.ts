export { createReceiver, DEFAULT_HEADER_NAME } from './create-receiver.js';
export type { AnyReceiver, ErrorHandler, Receiver, ReceiveOptions } from './types.js';
export { WebhookHandlerError } from './errors.js';
export { getHeader } from './headers.js';
export type { HeadersInput } from './headers.js';
export type { ActionPattern, EventForPattern, EventHandler } from './patterns.js';
export type { Delivery, ReceiveOutcome, ReceiveResult, ReceiverLogEvent, ReceiverLogRecord, ReceiverOptions } from './types.js';
export type { DeliveryInbox, DeliveryToStore, HandlerContext, InboxHandlerContext, StoredRow } from './inbox-contract.js';
