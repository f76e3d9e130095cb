import { MAX_TIMER_MS, settleWithin } from '../shared/timers.js';

/**
 * The inbox's one clock: every duration it measures, every date it stores or compares and every
 * timer it sets goes through it, so that a test moves time and fires timers when it says, never
 * sleeping (test/kit/time.ts has the one a test drives). `createInbox` takes it as an internal
 * option; nothing public names it.
 */
export interface Clock {
  /** Milliseconds on a monotonic clock: durations, deadlines and leases held in memory are measured on it. */
  now(): number;
  /** The wall time: what is stored, bucketed by minute or compared with the database's dates. */
  date(): Date;
  /**
   * Calls `fn` after `ms`; returns what cancels it. `keepAlive`: the timer holds the process open
   * (the poll: a worker keeps its process alive until stop(), as a listening server does).
   */
  after(ms: number, fn: () => void, keepAlive: boolean): () => void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  date: () => new Date(),
  after(ms, fn, keepAlive) {
    const timer = setTimeout(fn, Math.min(ms, MAX_TIMER_MS)); // a longer wait would fire after 1 ms
    if (!keepAlive) (timer as { unref?: () => void }).unref?.();
    return () => clearTimeout(timer);
  },
};

/** Resolves after `ms` on `clock` (a pause between passes, a backoff): holds the process open unless `keepAlive` is false. */
export function pause(clock: Clock, ms: number, keepAlive = true): Promise<void> {
  return new Promise((resolve) => clock.after(ms, resolve, keepAlive));
}

/** True when `work` settled within `ms` on `clock`; false when the time ran out first (`work` goes on). */
export function settledWithin(clock: Clock, work: Promise<unknown>, ms: number): Promise<boolean> {
  return settleWithin(
    work.then(() => true),
    ms,
    () => false,
    (wait, fire) => clock.after(wait, fire, true),
  );
}
