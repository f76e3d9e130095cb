/**
 * Time in tests without waiting on it: the one clock a test moves and fires (the inbox's, injected
 * with `createInbox({ clock })` or into a loop), promises the test resolves, a bounded poll for a
 * condition, and the one real `sleep` that remains (a bound, a cleanup, a child's pace).
 */
import { vi } from 'vitest';
import type { Clock } from '../../src/inbox/clock.js';

/** A real wait. For bounds and pacing only: a test that must wait for time injects a ManualClock; one that waits for a condition uses `until`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Lets pending promise callbacks and I/O callbacks run: `rounds` turns of the event loop. */
export async function flush(rounds = 1): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Polls `check` until it returns without throwing (an `expect`, or a throw of its own) and resolves
 * with what it returned; past `timeoutMs` it fails with the last error. vi.waitFor, bounded for a
 * loaded machine: the one poll of the suites.
 */
export function until<T>(check: () => T | Promise<T>, timeoutMs = 10_000, intervalMs = 10): Promise<T> {
  return vi.waitFor(check, { timeout: timeoutMs, interval: intervalMs });
}

const NOT_YET = new Error('not yet');

/**
 * Polls `probe` until it returns something other than undefined or false, and resolves with it;
 * past `timeoutMs` it fails naming `what()`. A probe that throws fails at the bound with its error.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  what: () => string,
  intervalMs = 25,
): Promise<T> {
  try {
    return await until(
      async () => {
        const value = await probe();
        if (value === undefined || value === false) throw NOT_YET;
        return value;
      },
      timeoutMs,
      intervalMs,
    );
  } catch (error) {
    if (error !== NOT_YET) throw error;
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`, { cause: error });
  }
}

/** Rejects with `what` if `promise` has not settled within `ms` (a bound on a wait that may hang). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
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
  /** When it is due, on the clock's now(). */
  readonly at: number;
  readonly fn: () => void;
  readonly keepAlive: boolean;
  cancelled: boolean;
}

/**
 * The inbox's Clock, driven by the test: time moves and timers fire only when the test says.
 * now() starts at 0; date() is `wallStart` plus now() (the real time at construction by default).
 */
export class ManualClock implements Clock {
  readonly timers: ManualTimer[] = [];
  readonly #wallStart: number;
  #now = 0;

  constructor(wallStart: number | Date = Date.now()) {
    this.#wallStart = typeof wallStart === 'number' ? wallStart : wallStart.getTime();
  }

  now(): number {
    return this.#now;
  }

  date(): Date {
    return new Date(this.#wallStart + this.#now);
  }

  /** Moves now() forward; fires nothing (the test fires the timers it means to). */
  pass(ms: number): void {
    this.#now += ms;
  }

  after(ms: number, fn: () => void, keepAlive = false): () => void {
    const timer: ManualTimer = { ms, at: this.#now + ms, fn, keepAlive, cancelled: false };
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

  /** Moves now() to the earliest live timer that `matches` and fires it; `undefined` (and nothing moves) when there is none. */
  fireNext(matches: (timer: ManualTimer) => boolean = () => true): ManualTimer | undefined {
    const next = this.live.filter(matches).sort((a, b) => a.at - b.at)[0];
    if (next === undefined) return undefined;
    this.#now = Math.max(this.#now, next.at);
    next.cancelled = true;
    next.fn();
    return next;
  }

  /**
   * Moves now() forward by `ms`, firing every timer that falls due on the way in the order of
   * their times (one set by a timer that fired fires too when due), each at its own now(). After
   * each timer, `settle` (the event loop's turns by default) lets the work it started run on.
   */
  async advance(ms: number, settle: () => Promise<void> = () => flush(3)): Promise<number> {
    const end = this.#now + ms;
    let fired = 0;
    for (;;) {
      if (this.fireNext((timer) => timer.at <= end) === undefined) break;
      fired++;
      await settle();
    }
    this.#now = end;
    return fired;
  }
}
