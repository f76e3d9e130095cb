import type { AnyWebhookEvent } from '../events/types.js';

/** Where a delivery is: waiting (or waiting to be retried), running, finished, given up, or a record only. */
export type DeliveryState = 'pending' | 'running' | 'done' | 'dead' | 'ignored';

export const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'running', 'done', 'dead', 'ignored'];

/** One stored delivery, as `list` returns it (no body). */
export interface StoredDelivery {
  /** The row's id: stable, unique in this inbox; use it as an idempotency key for outside calls. */
  readonly id: string;
  readonly state: DeliveryState;
  readonly action: string;
  readonly app: string | null;
  readonly tickId: string | null;
  /** The event's own `timestamp`, exactly as sent. */
  readonly eventTime: string;
  /** The same in nanoseconds since the epoch (the time received when it is not RFC 3339). */
  readonly eventNanos: bigint;
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
  readonly doneAt: Date | null;
  /** Set by `replay()`. */
  readonly replayedAt: Date | null;
  /** With `list({ includeEvents: true })`: the body parsed (undefined if it no longer parses). */
  readonly event?: AnyWebhookEvent | undefined;
}

export interface DeliveryAttempt {
  readonly attempt: number;
  /** Which worker ran it (`workerId`). */
  readonly worker: string;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
  /** `null` while running; `crashed` when its worker stopped mid-attempt. */
  readonly outcome: 'succeeded' | 'failed' | 'crashed' | 'abandoned' | null;
  readonly error: string | null;
}

/** `get(id)`: the delivery with its raw body, signature header, event and attempts. */
export interface StoredDeliveryDetail extends StoredDelivery {
  /** The body exactly as received (the bytes the signature covers). */
  readonly body: Uint8Array;
  /** The signature header exactly as received. */
  readonly signature: string;
  /** The body parsed; `undefined` if it no longer parses (it parsed when it was accepted). */
  readonly event: AnyWebhookEvent | undefined;
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
  app?: string;
  state?: DeliveryState | readonly DeliveryState[];
  /** These ids only. */
  ids?: readonly string[];
}

export interface ListOptions extends DeliveryFilter {
  /** At most this many (default 100, at most 1,000). */
  limit?: number;
  /** The `next` cursor of the previous page. */
  after?: string;
  /** `'asc'` (default): oldest event first; `'desc'`: newest first. */
  order?: 'asc' | 'desc';
  /** Also parse each body into `event` (e.g. to rebuild `createRackState` after a restart). */
  includeEvents?: boolean;
}

export interface ListPage {
  readonly deliveries: readonly StoredDelivery[];
  /** Pass as `after` for the next page; `undefined` on the last page. */
  readonly next: string | undefined;
}

export interface InboxStats {
  readonly pending: number;
  readonly running: number;
  readonly done: number;
  readonly dead: number;
  readonly ignored: number;
  readonly total: number;
  /** Milliseconds since the oldest pending delivery was received; `null` when none is pending. */
  readonly oldestPendingAgeMs: number | null;
}

export interface MigrateResult {
  /** Versions this call applied (empty when the schema was current). */
  readonly applied: readonly number[];
  readonly version: number;
}
