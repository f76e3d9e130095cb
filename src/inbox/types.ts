import type { AnyWebhookEvent } from '../events/types.js';
import type { GapEvidence } from '../reconcile/types.js';

/**
 * Where a delivery is: waiting (or waiting to be retried), running, finished, given up, a record
 * only, or the same event as an earlier delivery (kept, no handler runs; `retry` runs it).
 */
export type DeliveryState = 'pending' | 'running' | 'done' | 'dead' | 'ignored' | 'duplicate';

export const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'running', 'done', 'dead', 'ignored', 'duplicate'];

/** Where a stored delivery came from: the rack's signed request, or a reconcile that rebuilt it from the rack's API. */
export type DeliveryOrigin = 'received' | 'reconciled';

/** The record and field of the rack's API that prove a reconciled delivery's event was sent: the gap's evidence, stored. */
export type ReconciledEvidence = GapEvidence;

/** One stored delivery, as `list` returns it (no body). */
export interface StoredDelivery {
  /** The row's id: stable, unique in this inbox; use it as an idempotency key for outside calls. */
  readonly id: string;
  /** Where the delivery is. */
  readonly state: DeliveryState;
  /** The event's action. */
  readonly action: string;
  /** The event's `data.app`, when it has one. */
  readonly app: string | null;
  /** The event's `data.tick_id`, when it has one. */
  readonly tickId: string | null;
  /** The event's own `timestamp`, exactly as sent. */
  readonly eventTime: string;
  /** The same in nanoseconds since the epoch (the time received when it is not RFC 3339). */
  readonly eventNanos: bigint;
  /** When the receiver committed it (the database's clock). */
  readonly receivedAt: Date;
  /** The signature's `t` (unix seconds). */
  readonly signedAt: number;
  /** Which of the receiver's secrets matched. */
  readonly secretIndex: number;
  /** Attempts made so far, all time. */
  readonly attempts: number;
  /** When a pending delivery is next due. */
  readonly runAt: Date | null;
  /** The last failure, bounded; never a secret or the body. */
  readonly lastError: string | null;
  /** When its handlers last succeeded. */
  readonly doneAt: Date | null;
  /** Set by `replay()`. */
  readonly replayedAt: Date | null;
  /**
   * For a `duplicate`: the id of the earlier delivery it repeats (the same event, other bytes);
   * `null` otherwise, or once that delivery was pruned.
   */
  readonly duplicateOf: string | null;
  /**
   * `'received'`: a signed delivery, as the rack sent it. `'reconciled'`: rebuilt from the rack's
   * API by `inbox reconcile --record` because the rack sent the event and it never arrived: no
   * signature, a body built from the API's records (docs/reconcile.md).
   */
  readonly origin: DeliveryOrigin;
  /** For a `reconciled` delivery: what proves the rack sent the event; `null` for a received one. */
  readonly evidence: ReconciledEvidence | null;
  /** With `list({ includeEvents: true })`: the body parsed (undefined if it no longer parses). */
  readonly event?: AnyWebhookEvent | undefined;
}

/** One attempt at running a delivery's handlers, as `get(id)` lists them. */
export interface DeliveryAttempt {
  /** Its number, from 1. */
  readonly attempt: number;
  /** Which worker ran it (`workerId`). */
  readonly worker: string;
  /** When it started (recorded before the handlers ran). */
  readonly startedAt: Date;
  /** When it ended; `null` while running. */
  readonly finishedAt: Date | null;
  /** `null` while running; `crashed` when its worker stopped mid-attempt. */
  readonly outcome: 'succeeded' | 'failed' | 'crashed' | 'abandoned' | null;
  /** The failure, bounded to 2,000 characters; never a secret or the body. */
  readonly error: string | null;
  /** The class of the (first) error thrown, such as `TypeError`; `null` when what was thrown was no Error, or before schema 8. */
  readonly errorClass: string | null;
  /** Its stack as thrown, bounded to 4 KiB; `null` likewise. */
  readonly errorStack: string | null;
}

/** `get(id)`: the delivery with its raw body, signature header, event and attempts. */
export interface StoredDeliveryDetail extends StoredDelivery {
  /** The body exactly as received (the bytes the signature covers). */
  readonly body: Uint8Array;
  /** The signature header exactly as received. */
  readonly signature: string;
  /** The body parsed; `undefined` if it no longer parses (it parsed when it was accepted). */
  readonly event: AnyWebhookEvent | undefined;
  /** Every attempt, oldest first. */
  readonly attemptLog: readonly DeliveryAttempt[];
}

/** Which deliveries: every field narrows. Times are the event's own time. */
export interface DeliveryFilter {
  /** Event time at or after this: a Date, an RFC 3339 string (nanoseconds kept), or nanoseconds. */
  from?: Date | string | bigint;
  /** Event time before this. */
  to?: Date | string | bigint;
  /** An action or a `prefix:*` pattern; or several. */
  action?: string | readonly string[];
  /** This app's deliveries only (`data.app`). */
  app?: string;
  /** In this state, or one of these. */
  state?: DeliveryState | readonly DeliveryState[];
  /** These ids only. */
  ids?: readonly string[];
}

/** Options of `inbox.list`: a {@link DeliveryFilter}, and the page. */
export interface ListOptions extends DeliveryFilter {
  /**
   * At most this many, from 1 to 1,000.
   *
   * @defaultValue `100`
   */
  limit?: number;
  /**
   * The `next` cursor of the previous page.
   *
   * @defaultValue none: the first page
   */
  after?: string;
  /**
   * `'asc'`: oldest event first (to the nanosecond, then arrival); `'desc'`: newest first.
   *
   * @defaultValue `'asc'`
   */
  order?: 'asc' | 'desc';
  /**
   * Also parse each body into `event` (e.g. to rebuild `createRackState` after a restart).
   *
   * @defaultValue `false`
   */
  includeEvents?: boolean;
}

/** One page of `inbox.list`. */
export interface ListPage {
  /** The deliveries of this page, in the order asked for. */
  readonly deliveries: readonly StoredDelivery[];
  /** Pass as `after` for the next page; `undefined` on the last page. */
  readonly next: string | undefined;
}

/** What `inbox.stats()` counts. */
export interface InboxStats {
  /** Deliveries waiting to run, or waiting for a retry. */
  readonly pending: number;
  /** Deliveries whose handlers are running. */
  readonly running: number;
  /** Deliveries whose handlers succeeded. */
  readonly done: number;
  /** Deliveries that failed `maxAttempts` times. */
  readonly dead: number;
  /** Deliveries stored as a record only (unknown action, or an `ignore` match). */
  readonly ignored: number;
  /** Deliveries kept as the same event as an earlier one (other bytes): no handler ran. */
  readonly duplicate: number;
  /** Every delivery in the table. */
  readonly total: number;
  /** Milliseconds since the oldest pending delivery was received; `null` when none is pending. */
  readonly oldestPendingAgeMs: number | null;
}

/** What `inbox.migrate()` did. */
export interface MigrateResult {
  /** Versions this call applied (empty when the schema was current). */
  readonly applied: readonly number[];
  /** The schema's version now. */
  readonly version: number;
}
