import type { AnyWebhookEvent } from '../events/types.js';
import type { ReceiveResult } from './delivery.js';
import type { WebhookHandlerError } from './errors.js';
import type { ReceiverLogRecord } from './log-record.js';
import type { ParsedDelivery } from './steps/parse.js';
import type { VerifiedDelivery } from './steps/verify.js';

/**
 * What the receiver asks of an inbox, and what an inbox's worker asks of the receiver: one typed
 * interface, {@link DeliveryInbox}, passed as `createReceiver({ inbox })`. The core holds only these
 * shapes; `rack-webhooks/inbox` implements them over PostgreSQL, and the code of the store step
 * ships there too (`connectReceiver`), so that a receiver without an inbox (a Worker's bundle)
 * carries none of it.
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
 * Another inbox implements `storeDelivery` (and `countRefusal` if it keeps counts) and takes
 * `connectReceiver` from `rack-webhooks/inbox` as it is.
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
  /**
   * Counts one delivery refused before it was stored, by its code (`signature_mismatch`,
   * `payload_too_large`...): called by the receiver for the deliveries `receive()` refuses, and by
   * `receiver.reportRefusal()` for those an adapter refuses before `receive()` runs. Synchronous
   * and cheap: it runs on the refusal path, a flood of forged requests included.
   *
   * @defaultValue none: refusals are not counted
   */
  countRefusal?(code: string): void;
  /**
   * Called once by `createReceiver({ inbox })`, as the receiver is created: the receiver hands
   * over what a worker runs for it (`inbox.work(receiver)` finds it by the receiver), and takes
   * back its store step. `createInbox`'s inboxes have it; another inbox uses `connectReceiver`
   * from `rack-webhooks/inbox`.
   */
  connectReceiver(connection: ReceiverConnection): InboxConnection;
  /** Type only: the transaction client handlers receive. */
  readonly transactionType?: Tx;
}

/** What `createReceiver({ inbox })` hands its inbox, once, through {@link DeliveryInbox.connectReceiver}. */
export interface ReceiverConnection {
  /** The inbox the receiver was created with: its `storeDelivery` is what the store step calls. */
  readonly inbox: DeliveryInbox<unknown>;
  /** The receiver being created: the key under which a worker finds its runtime. */
  readonly receiver: object;
  /** What a worker runs for this receiver: parse a stored body, run the handlers, report, log. */
  readonly runtime: ReceiverRuntime;
  /** True when the receiver was given a `now` clock: a stored delivery then takes its time, not the database's. */
  readonly customClock: boolean;
}

/** What the inbox hands back to the receiver from {@link DeliveryInbox.connectReceiver}. */
export interface InboxConnection {
  /** The receiver's store step, run for each verified, parsed delivery in place of its handlers. */
  readonly store: StoreStep;
  /**
   * `false` when the inbox was created with `telemetry: false`: the receiver then publishes nothing
   * for OpenTelemetry (see docs/operating.md).
   *
   * @defaultValue `true`
   */
  readonly telemetry?: boolean;
}

/**
 * Step 3 with an inbox: one committed row is the claim. Resolves with what `receive()` resolves
 * with, or rejects with the inbox's error (the receiver counts and reports it).
 *
 * @internal
 */
export type StoreStep = (verified: VerifiedDelivery, parsed: ParsedDelivery, started: number) => Promise<ReceiveResult>;

/** A handler's second argument when the receiver has an inbox. */
export interface InboxHandlerContext<Tx> {
  /** The stored delivery: its id (use it as an idempotency key) and which attempt this is (1-based). */
  readonly delivery: {
    /** The stored row's id. */
    readonly id: string;
    /** Which attempt this is, from 1. */
    readonly attempt: number;
    /**
     * `'received'`: the rack's signed delivery. `'reconciled'`: rebuilt from the rack's API by
     * `inbox reconcile --record` because the real one never arrived: unsigned, its body built from
     * the API's records, which may lack fields the rack's event carried (docs/reconcile.md).
     */
    readonly origin: 'received' | 'reconciled';
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

/**
 * What a receiver hands its inbox for the worker ({@link DeliveryInbox.connectReceiver}): parse a
 * stored body, run the handlers, tell `onError` and the logger. Its records and messages about
 * attempts are the inbox's (they ship with it, not in a Worker's bundle).
 */
export interface ReceiverRuntime {
  /** Parses a stored body, validated as the receiver's `validate` option says. */
  parseStored(body: Uint8Array): AnyWebhookEvent;
  /** Runs the handlers of one event; resolves with what they threw (empty: success). */
  runHandlers(event: AnyWebhookEvent, context: InboxHandlerContext<unknown>): Promise<readonly unknown[]>;
  /** Tells the receiver's `onError` handlers; resolves once they ran (what they throw is logged, not thrown). */
  reportError(error: WebhookHandlerError, started: number): Promise<void>;
  /** False when the receiver has no logger: callers skip building records. */
  readonly logging: boolean;
  /**
   * Writes one record to the receiver's logger; its `durationMs` runs from `started` (the receiver's
   * clock, default now), unless the record carries its own, timed on the inbox's clock (an outage's).
   */
  log(record: Omit<ReceiverLogRecord, 'durationMs'> & { readonly durationMs?: number }, started?: number): void;
  /** The receiver's clock, in ms (its `now` option, or `Date.now`). */
  now(): number;
  /** The receiver's `telemetry` option: `false` turns its spans and metrics off. */
  readonly telemetry?: boolean | undefined;
}

/** What a worker runs: the receiver's runtime, and the report of a failed attempt (built by the inbox). */
export interface WorkerRuntime extends ReceiverRuntime {
  /** Tells onError and the logger about failed handlers of a stored delivery. */
  reportFailure(
    event: AnyWebhookEvent,
    failures: readonly unknown[],
    delivery: {
      /** The stored row's id. */
      id: string;
      /** Which attempt failed, from 1. */
      attempt: number;
      /** Whether another attempt follows. */
      willRetry: boolean;
    },
  ): Promise<void>;
}
