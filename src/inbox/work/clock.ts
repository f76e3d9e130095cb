import { MAX_TIMER_MS } from '../../shared/timers.js';

/** Time and timers, injectable so that a test moves time and fires timers one by one, never sleeping. */
export interface Clock {
  /** Milliseconds on a monotonic clock (leases of rows held ahead are measured on it). */
  now(): number;
  /**
   * Calls `fn` after `ms`; returns what cancels it. `keepAlive`: the timer holds the process open
   * (the poll: a worker keeps its process alive until stop(), as a listening server does).
   */
  after(ms: number, fn: () => void, keepAlive: boolean): () => void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  after(ms, fn, keepAlive) {
    const timer = setTimeout(fn, Math.min(ms, MAX_TIMER_MS)); // a longer wait would fire after 1 ms
    if (!keepAlive) (timer as { unref?: () => void }).unref?.();
    return () => clearTimeout(timer);
  },
};
