import { MAX_TIMER_MS } from '../../../shared/timers.js';

/**
 * How long `receive()` keeps a verified delivery while the inbox database cannot be reached, so
 * that a passing outage does not lose it: the rack never retries and never reads the answer.
 */
export interface StoreRetryOptions {
  /**
   * The longest a delivery waits for the database, in ms, counted from its arrival at the inbox,
   * whatever the driver does; past it `receive()` rejects with `inbox_unavailable` (503), even with
   * an attempt still under way (that attempt goes on: should it commit, the row stands and an
   * `inbox_stored_after_refusal` record says so). Keep it below the rack's dispatch timeout (30 s by
   * default) and your HTTP server's request timeout. `0`: no waiting, one attempt, answered as the
   * driver answers it.
   *
   * @defaultValue `20000`
   */
  maxWaitMs?: number;
  /**
   * The most memory, in bytes, that all deliveries held by the process's inboxes may take at once,
   * counted from each delivery's arrival: twice its body (as received and parsed) and 4 KiB for the
   * rest, so it bounds their number too. A delivery that would go past it is refused with 503 at
   * once rather than risk the process. Shared by every inbox of the process (one loaded copy of
   * `rack-webhooks/inbox`): each inbox checks everything held against its own cap.
   *
   * @defaultValue `67108864` (64 MiB)
   */
  maxBufferedBytes?: number;
}

export type ResolvedStoreRetry = Readonly<Required<StoreRetryOptions>>;

export const DEFAULT_STORE_RETRY: ResolvedStoreRetry = { maxWaitMs: 20_000, maxBufferedBytes: 64 * 1024 * 1024 };

/** `false`: no waiting and no cap, a failed store is answered 503 at once (as before issue 18). */
export function resolveStoreRetry(options: StoreRetryOptions | false | undefined): ResolvedStoreRetry {
  if (options === false) return { maxWaitMs: 0, maxBufferedBytes: Infinity };
  if (options === undefined) return DEFAULT_STORE_RETRY;
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`storeRetry must be { maxWaitMs?, maxBufferedBytes? } or false, got ${String(options)}`);
  }
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_STORE_RETRY.maxWaitMs;
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_STORE_RETRY.maxBufferedBytes;
  if (typeof maxWaitMs !== 'number' || !(maxWaitMs >= 0 && maxWaitMs <= MAX_TIMER_MS)) {
    throw new RangeError(`storeRetry.maxWaitMs must be a number of ms from 0 to ${MAX_TIMER_MS}, got ${String(maxWaitMs)}`);
  }
  if (typeof maxBufferedBytes !== 'number' || !(maxBufferedBytes >= 0) || !Number.isFinite(maxBufferedBytes)) {
    throw new RangeError(`storeRetry.maxBufferedBytes must be a finite number >= 0, got ${String(maxBufferedBytes)}`);
  }
  return { maxWaitMs, maxBufferedBytes };
}
