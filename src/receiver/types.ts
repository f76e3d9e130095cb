import type { WebhookDedupError } from '../dedup/errors.js';
import type { DedupStore } from '../dedup/store.js';
import type { AnyWebhookEvent } from '../events/types.js';
import type { ValidateOption } from '../events/validation.js';
import type { RawPayload } from '../signature/payload.js';
import type { SecretEncoding, SecretsInput } from '../signature/secrets.js';
import type { WebhookHandlerError } from './errors.js';
import type { HeadersInput } from './headers.js';
import type { ActionPattern, EventForPattern, EventHandler } from './patterns.js';
import type { DeliveryInbox, HandlerContext } from './inbox-contract.js';

export interface ReceiverOptions<Tx = undefined> {
  /**
   * Store every verified delivery in this inbox (`createInbox` from `rack-webhooks/inbox`) and
   * resolve `'accepted'` once it is committed; handlers then run from `inbox.work(receiver)`.
   * The inbox's unique keys replace `dedup`.
   */
  inbox?: DeliveryInbox<Tx>;
  /** One key, several, or the rack parameter's `"new,old"` form. */
  secrets: SecretsInput;
  /** Seconds either side of now; default 300. */
  tolerance?: number;
  secretEncoding?: SecretEncoding;
  /** Default `Service-Signature`; deployed racks use a vendor-prefixed name. Case-insensitive. */
  headerName?: string;
  /** Where delivery keys are claimed; default a `MemoryDedupStore`; `false` turns dedup off. */
  dedup?: DedupStore | false;
  /** How long the `(tick_id, action)` key is held, in seconds; default 86,400 (24 hours). */
  eventKeyTtl?: number;
  /** Give the keys back when a handler fails, so a copy of the delivery can still be processed. Default true. */
  releaseOnError?: boolean;
  /**
   * What to do when the dedup store fails. `'open'` (default) processes the delivery and reports
   * the store error: the rack never retries, so refusing would lose the event for good, while a
   * duplicate is the lesser harm. `'closed'` refuses it with a 503 `WebhookDedupError`.
   */
  dedupFailure?: 'open' | 'closed';
  /**
   * Validate known actions against their schemas. Default false. `true` needs
   * `import 'rack-webhooks/validate'` (checked when the receiver is created); or pass `validators`
   * from that module.
   */
  validate?: ValidateOption;
  /** Actions or `prefix:*` patterns dropped before dedup and handlers, e.g. `ROUTINE_ACTIONS`. */
  ignore?: readonly string[];
  /** Structured records of what the receiver did. Never holds a secret, a signature or a body. */
  logger?: (record: ReceiverLogRecord) => void;
  /** Clock in milliseconds (tests, re-processing stored deliveries). */
  now?: () => number;
}

export interface Delivery {
  /** The raw body exactly as received. */
  body: RawPayload;
  headers: HeadersInput | null | undefined;
}

/** `'processed'` without an inbox (handlers ran); `'accepted'` with one (the row is committed). */
export type ReceiveOutcome = 'processed' | 'accepted' | 'duplicate' | 'ignored';

export interface ReceiveResult {
  outcome: ReceiveOutcome;
  event: AnyWebhookEvent;
  /** With an inbox: the stored row's id, for `'accepted'` and `'ignored'`. */
  id?: string;
}

export type ReceiverLogEvent =
  | 'processed'
  | 'accepted'
  | 'duplicate'
  | 'ignored'
  | 'retried'
  | 'dead'
  | 'replayed'
  | 'inbox_unavailable'
  | 'inbox_not_migrated'
  | 'inbox_failed'
  | 'rejected'
  | 'handler_failed'
  | 'dedup_unavailable'
  | 'on_error_failed';

export interface ReceiverLogRecord {
  level: 'info' | 'warn' | 'error';
  event: ReceiverLogEvent;
  message: string;
  action?: string;
  tickId?: string;
  /** The signature's `t`. */
  timestamp?: number;
  /** Which configured secret matched. */
  secretIndex?: number;
  /** The error code, for rejections and failures. */
  code?: string;
  /** With an inbox: the delivery's id, and the attempt a worker record is about. */
  deliveryId?: string;
  attempt?: number;
  durationMs: number;
}

export type ErrorHandler = (error: WebhookHandlerError | WebhookDedupError) => unknown;

export interface Receiver<Tx = undefined> {
  /** The header the signature is read from. */
  readonly headerName: string;
  /** Runs `handler` for an action, a list of actions, or a `prefix:*` pattern; typed exactly. */
  on<const P extends ActionPattern>(pattern: P | readonly P[], handler: EventHandler<EventForPattern<P>, HandlerContext<Tx>>): Receiver<Tx>;
  /** Runs `handler` for every accepted delivery, unknown actions included. */
  onAny(handler: EventHandler<AnyWebhookEvent, HandlerContext<Tx>>): Receiver<Tx>;
  /** Sees handler failures and, when dedup fails open, store failures. Its own errors are contained. */
  onError(handler: ErrorHandler): Receiver<Tx>;
  /** Removes a handler from one pattern, or (without a pattern) from everywhere. */
  off(handler: EventHandler<never, never> | ErrorHandler): Receiver<Tx>;
  off<const P extends ActionPattern>(pattern: P | readonly P[], handler: EventHandler<never, never>): Receiver<Tx>;
  /**
   * Verifies, parses, deduplicates and dispatches one delivery. Resolves with the outcome;
   * rejects with WebhookVerificationError (401), WebhookPayloadError (400), WebhookDedupError (503)
   * or WebhookHandlerError (500). With an inbox it stores instead of dispatching, and rejects with
   * WebhookInboxError (503 `inbox_unavailable`, 500 `inbox_not_migrated`) when it cannot.
   */
  receive(delivery: Delivery, options?: ReceiveOptions): Promise<ReceiveResult>;
}

export interface ReceiveOptions {
  /**
   * `'after-handlers'` (default) resolves once every handler has finished. `'before-handlers'`
   * resolves as soon as the delivery is verified, parsed and claimed, and lets the handlers run on:
   * for a rack whose dispatch timeout is shorter than your handlers. Their failures then go to
   * `onError` and the logger (and release the claims), since the response is already sent.
   */
  acknowledge?: 'after-handlers' | 'before-handlers';
}

/** What an adapter needs of a receiver: any receiver, with or without an inbox. */
export type AnyReceiver = Pick<Receiver<unknown>, 'receive' | 'headerName'>;
