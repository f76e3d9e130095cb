/**
 * The public types of what the receiver and the inbox ask of each other (inbox-contract.ts), listed
 * once: the root entry (through receiver/index.ts) and rack-webhooks/inbox both export this list.
 */
export type {
  DeliveryInbox,
  DeliveryToStore,
  InboxConnection,
  InboxHandlerContext,
  ReceiverConnection,
  ReceiverRuntime,
  StoreDeliveryOptions,
  StoredRow,
} from './inbox-contract.js';
