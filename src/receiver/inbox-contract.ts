import type { AnyWebhookEvent } from '../events/types.js';
import type { WebhookMountError } from './errors.js';
import type { ReceiverLogRecord } from './log-record.js';

/**
 * What the receiver asks of an inbox, and what an inbox's worker asks of the receiver. The core
 * holds only these shapes; `rack-webhooks/inbox` implements them over PostgreSQL.
 */

/** One verified, parsed delivery, ready to store. */
export interface DeliveryToStore {
  /** The raw body exactly as received. */
  readonly body: Uint8Array | string;
  /** The signature header as received (repeated headers joined with a comma). */
  readonly signature: string;
  /** The signature's `t`. */
  readonly signedAt: number;
  /** Which of the receiver's secrets matched. */
  readonly secretIndex: number;
  /** The parsed event. */
  readonly event: AnyWebhookEvent;
  /** `body:<sha256 of the body>`: unique in the store; a copy with these bytes stores nothing. */
  readonly bodyKey: string;
  /**
   * `event:<action>:<tick_id>:<sha256 of what it says apart from time>` when the event has a
   * `tick_id`: unique among the rows that run handlers; a delivery with new bytes but this key is
   * stored as a `duplicate` row that points at the first.
   */
  readonly eventKey: string | undefined;
  /** Stored as a record only: unknown action, or matched by `ignore`. */
  readonly ignored: boolean;
  /**
   * When it was received, from the receiver's `now` option when one was given (re-importing
   * stored deliveries); otherwise undefined and the database's clock decides.
   */
  readonly receivedAt?: Date | undefined;
}

/** The row `storeDelivery` committed. */
export interface StoredRow {
  /** The new row's id. */
  readonly id: string;
  /** Set when the row was stored as a `duplicate` of this earlier row: no handler runs for it. */
  readonly duplicateOf?: string | undefined;
}

/** What the receiver hands the inbox with each delivery to store. */
export interface StoreDeliveryOptions {
  /**
   * The receiver's logger, for the records of an outage (its start and its end).
   *
   * @defaultValue none: the outage is not logged
   */
  readonly log?: ((record: ReceiverLogRecord) => void) | undefined;
}

/**
 * What a receiver's `inbox` option takes: `createInbox` from `rack-webhooks/inbox` returns one.
 *
 * @typeParam Tx - The transaction client that handlers receive.
 */
export interface DeliveryInbox<Tx = unknown> {
  /**
   * Commits one row for the delivery. Resolves with its id (and, for a delivery judged the same
   * event as a stored one, that row's id as `duplicateOf`), or `undefined` when a delivery with
   * the same bytes is stored already. May wait while the database is away for a reason that can
   * pass (see `storeRetry`).
   */
  storeDelivery(delivery: DeliveryToStore, options?: StoreDeliveryOptions): Promise<StoredRow | undefined>;
  /** Type only: the transaction client handlers receive. */
  readonly transactionType?: Tx;
}

/** A handler's second argument when the receiver has an inbox. */
export interface InboxHandlerContext<Tx> {
  /** The stored delivery: its id (use it as an idempotency key) and which attempt this is (1-based). */
  readonly delivery: {
    /** The stored row's id. */
    readonly id: string;
    /** Which attempt this is, from 1. */
    readonly attempt: number;
  };
  /**
   * A client of the same kind as the inbox's database, inside the transaction that marks this
   * delivery done: what you write through it commits if and only if the delivery is done.
   */
  readonly transaction: Tx;
  /**
   * Aborted when the worker stops past `stop({ timeoutMs })`: the handler should give up (pass it
   * to `fetch` and the like); its delivery is then left to the lease and runs again.
   */
  readonly signal: AbortSignal;
}

/** A handler's second argument: {@link InboxHandlerContext} with an inbox, `undefined` without one. */
export type HandlerContext<Tx> = [Tx] extends [undefined] ? undefined : InboxHandlerContext<Tx>;

/** What a worker needs from the receiver it runs: parse a stored body, run handlers, log. Internal. */
export interface ReceiverRuntime {
  parseStored(body: Uint8Array): AnyWebhookEvent;
  /** Runs the handlers of one event; resolves with what they threw (empty: success). */
  runHandlers(event: AnyWebhookEvent, context: InboxHandlerContext<unknown>): Promise<readonly unknown[]>;
  /** Tells onError and the logger about failed handlers of a stored delivery. */
  reportFailure(
    event: AnyWebhookEvent,
    failures: readonly unknown[],
    delivery: { id: string; attempt: number; willRetry: boolean },
  ): Promise<void>;
  log(record: Omit<ReceiverLogRecord, 'durationMs'>): void;
  /**
   * What an adapter calls when a body parser consumed the request (`raw_body_unavailable`): the
   * rack never reads answers, so the receiver's logger (once) and onError (each time) must hear it.
   */
  reportMountError?(error: WebhookMountError): Promise<void>;
  /** The receiver's `telemetry` option: `false` turns its spans and metrics off. */
  readonly telemetry?: boolean | undefined;
}

/**
 * Where an inbox from `createInbox` keeps the receiver's store step, so that the code of that step
 * ships with `rack-webhooks/inbox` and a receiver without an inbox (a Worker's bundle) carries none
 * of it. Not enumerable, not public.
 */
export const PERSIST_STEP: unique symbol = Symbol.for('rack-webhooks.persist-step') as never;

/**
 * Where an inbox keeps its refusal counter (`(code) => void`), and a receiver with an inbox hands
 * it on to the adapters, which refuse some requests before the receiver sees them. The counting
 * and writing live in the inbox; the receiver's part is one call. Not enumerable, not public.
 */
export const REFUSAL_COUNTER: unique symbol = Symbol.for('rack-webhooks.refusal-counter') as never;

/**
 * Where an inbox keeps the function that observes a receiver's deliveries (OpenTelemetry spans and
 * metrics, src/telemetry): applied by `createReceiver` to the receiver it returns, so that its
 * code ships with `rack-webhooks/inbox` and not in a Worker's bundle. Not enumerable, not public.
 */
export const OBSERVE_RECEIVER: unique symbol = Symbol.for('rack-webhooks.observe-receiver') as never;

/** Where a receiver keeps its runtime for `inbox.work(receiver)`; not enumerable, not public. */
export const RECEIVER_RUNTIME: unique symbol = Symbol.for('rack-webhooks.receiver-runtime') as never;

export function receiverRuntime(receiver: object): ReceiverRuntime | undefined {
  return (receiver as { [RECEIVER_RUNTIME]?: ReceiverRuntime })[RECEIVER_RUNTIME];
}
