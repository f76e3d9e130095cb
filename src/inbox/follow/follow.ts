/**
 * Follows an inbox read-only: every delivery stored after a starting id, in storage (id) order,
 * handed to `forward` one at a time, the history first, then each new one as it is stored. Woken by
 * the NOTIFY the inbox sends for a new delivery, with a poll for what sends none (a duplicate, an
 * ignored action, a database that cannot LISTEN: a read replica). It never writes, never claims a
 * row, and reads in bounded batches on the one connection it is given.
 */
import { systemClock, type Clock } from '../clock.js';
import type { Queryable } from '../../database/driver.js';
import type { TableNames } from '../schema/table-name.js';
import type { DeliveryFilter } from '../types.js';
import { GapWatch, type GapTiming } from './gaps.js';
import { readBatch, readBody, type FollowedDelivery } from './read.js';

export type { FollowedDelivery };

/** One connection: statements, and NOTIFY when it can (PostgreSQL, PGlite). */
export interface FollowSource extends Queryable {
  listen?(channel: string, onNotify: () => void, onError: (error: unknown) => void): Promise<() => Promise<void>>;
}

/** What `forward` says once a delivery is handled: go on, or stop here (it is to be sent again). */
/** `failed`: given up, go on; not counted as forwarded, and the resume point stays at or before it. */
export type ForwardVerdict = 'next' | 'failed' | 'stop';

export interface FollowOptions {
  readonly names: TableNames;
  readonly filter: DeliveryFilter;
  /** Deliveries with a larger id are followed. */
  readonly after: bigint;
  /** Stop once caught up instead of waiting for new deliveries. */
  readonly once: boolean;
  /** Stops the following after the delivery being handled. */
  readonly signal: AbortSignal;
  /** Rows per read (default 200). */
  readonly batchSize?: number;
  /** The poll between reads when no NOTIFY comes (default 1000 ms). */
  readonly pollMs?: number;
  readonly gapTiming?: GapTiming;
  /** Gap timing and the poll's timer (default: the system clock). */
  readonly clock?: Clock;
  /** Called once listening (or polling), before the first read: whatever is stored from now on is seen. */
  readonly onReady?: () => void;
  /** LISTEN was refused (a read replica): following goes on by polling. */
  readonly onListenRefused?: (error: unknown) => void;
  /** A delivery that was pruned between its batch and its turn. */
  readonly onGone?: (id: bigint) => void;
}

export interface FollowResult {
  /** How many deliveries were handed to `forward` and answered 'next'. */
  readonly forwarded: number;
  /** The highest id among them. */
  readonly lastId: bigint | undefined;
  /** How many were answered 'failed' (given up): following again from `resumeFrom` sends them again. */
  readonly failed: number;
  /** The lowest id among them. */
  readonly firstFailedId: bigint | undefined;
  /** Following again from this id sends nothing twice that was handled, and misses nothing. */
  readonly resumeFrom: bigint;
  readonly stoppedBy: 'caught-up' | 'signal' | 'forward' | 'error';
  /** The database failure that ended it, with stoppedBy 'error'. */
  readonly error?: unknown;
}

/** Waits that end after `ms`, at a wake-up (kept for the next wait when none is waiting), or when `signal` aborts. */
function wakeable(clock: Clock) {
  let pending = false;
  let wakeUp: (() => void) | undefined;
  return {
    notify(): void {
      if (wakeUp === undefined) pending = true;
      else wakeUp();
    },
    wait(ms: number, signal: AbortSignal): Promise<void> {
      if (pending || signal.aborted) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        const done = () => {
          cancel();
          signal.removeEventListener('abort', done);
          wakeUp = undefined;
          resolve();
        };
        const cancel = clock.after(ms, done, true);
        signal.addEventListener('abort', done, { once: true });
        wakeUp = done;
      });
    },
  };
}

export async function followInbox(
  source: FollowSource,
  options: FollowOptions,
  forward: (delivery: FollowedDelivery) => Promise<ForwardVerdict>,
): Promise<FollowResult> {
  const { names, filter, signal } = options;
  const batchSize = options.batchSize ?? 200;
  const pollMs = options.pollMs ?? 1000;
  const clock = options.clock ?? systemClock;
  const gaps = new GapWatch(options.gapTiming);
  const wake = wakeable(clock);
  let cursor = options.after;
  let forwarded = 0;
  let lastId: bigint | undefined;
  let failed = 0;
  let firstFailedId: bigint | undefined;
  // A gap still watched may yet fill: resuming from it re-sends what follows it (answered
  // 'duplicate' by the local receiver) rather than skip a delivery that commits after this run.
  const result = (stoppedBy: FollowResult['stoppedBy'], resumeFrom = cursor + 1n, error?: unknown): FollowResult => {
    resumeFrom = gaps.watchedBelow(resumeFrom - 1n)[0] ?? resumeFrom;
    // A delivery given up is sent again by the next run, not skipped (issue 38, point 7).
    if (firstFailedId !== undefined && firstFailedId < resumeFrom) resumeFrom = firstFailedId;
    return {
      forwarded,
      lastId,
      failed,
      firstFailedId,
      resumeFrom,
      stoppedBy,
      ...(error === undefined ? {} : { error }),
    };
  };
  let unlisten: (() => Promise<void>) | undefined;
  try {
    // A lost connection: the next read reports it. LISTEN refused (a read replica): the poll goes on alone.
    unlisten = await source.listen?.(names.channel, wake.notify, () => {}).catch((error: unknown) => void options.onListenRefused?.(error));
    options.onReady?.();
    while (!signal.aborted) {
      const batch = await readBatch(source, names, cursor, gaps.watchedBelow(cursor), filter, batchSize);
      const full = batch.rows.filter((row) => row.id > cursor).length >= batchSize;
      const decision = gaps.decide(cursor, batch.rows, batch.snapshot, clock.now());
      for (const row of decision.rows) {
        if (signal.aborted) return result('signal', row.id);
        if (row.matches) {
          const body = row.body ?? (await readBody(source, names, row.id));
          if (body === undefined) options.onGone?.(row.id);
          else {
            const verdict = await forward({ id: row.id, action: row.action, app: row.app, state: row.state, body });
            if (verdict === 'stop') return result('forward', row.id);
            if (verdict === 'failed') {
              failed++;
              if (firstFailedId === undefined || row.id < firstFailedId) firstFailedId = row.id;
            } else forwarded++;
            if (verdict === 'next' && (lastId === undefined || row.id > lastId)) lastId = row.id;
          }
        }
        if (row.id > cursor) cursor = row.id;
      }
      cursor = decision.cursor;
      if (decision.holdingMs !== undefined) await wake.wait(Math.min(decision.holdingMs, pollMs), signal);
      else if (full) continue;
      else if (options.once) return result('caught-up');
      else await wake.wait(pollMs, signal);
    }
    return result('signal');
  } catch (error) {
    return result('error', cursor + 1n, error);
  } finally {
    await unlisten?.().catch(() => {});
  }
}
