/**
 * Time in tests without waiting on it: a clock the test moves and fires, promises the test
 * resolves, and the few real waits that remain (a bounded cleanup, a poll for a row).
 */
import type { Clock } from '../../src/inbox/work/clock.js';

/** A real wait. For bounds and polls only: a test that must wait for time injects a ManualClock. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Lets pending promise callbacks and I/O callbacks run: `rounds` turns of the event loop. */
export async function flush(rounds = 1): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

/** A promise the test settles when it chooses. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export interface ManualTimer {
  readonly ms: number;
  readonly fn: () => void;
  readonly keepAlive: boolean;
  cancelled: boolean;
}

/** The worker loop's Clock, driven by the test: time moves and timers fire only when the test says. Starts at 0. */
export class ManualClock implements Clock {
  readonly timers: ManualTimer[] = [];
  #now = 0;

  now(): number {
    return this.#now;
  }

  /** Moves now() forward; fires nothing (the test fires the timers it means to). */
  pass(ms: number): void {
    this.#now += ms;
  }

  after(ms: number, fn: () => void, keepAlive = false): () => void {
    const timer: ManualTimer = { ms, fn, keepAlive, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** The timers not yet fired or cancelled. */
  get live(): ManualTimer[] {
    return this.timers.filter((timer) => !timer.cancelled);
  }

  /** Fires the live timers of `ms` (and removes them); returns how many fired. */
  fire(ms: number): number {
    const due = this.live.filter((timer) => timer.ms === ms);
    for (const timer of due) {
      timer.cancelled = true;
      timer.fn();
    }
    return due.length;
  }
}
