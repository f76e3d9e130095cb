import type { Clock } from '../../../src/inbox/work/clock.js';

/** A clock whose time moves and whose timers fire only when the test says: no loop test sleeps. */
export class ManualClock implements Clock {
  readonly timers: { ms: number; fn: () => void; keepAlive: boolean; cancelled: boolean }[] = [];
  #now = 0;

  now(): number {
    return this.#now;
  }

  /** Moves time on; fires nothing (fire() does). */
  pass(ms: number): void {
    this.#now += ms;
  }

  after(ms: number, fn: () => void, keepAlive: boolean) {
    const timer = { ms, fn, keepAlive, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  get live() {
    return this.timers.filter((t) => !t.cancelled);
  }

  /** Fires the live timers of `ms` (and removes them); how many fired. */
  fire(ms: number): number {
    const due = this.live.filter((t) => t.ms === ms);
    for (const timer of due) {
      timer.cancelled = true;
      timer.fn();
    }
    return due.length;
  }
}

export function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
