/** The longest a timer waits in Node (and browsers): past it, setTimeout fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls `fire` after `ms`; returns its cancel. setTimeout's, unless a caller brings its own clock. */
export type After = (ms: number, fire: () => void) => () => void;

const afterTimeout: After = (ms, fire) => {
  const timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
};

/**
 * `promise`, or what `late()` gives if it has not settled within `ms` (a bound for a read that can
 * wait forever without failing: a silent host, a stuck pool). The timer ends with the race.
 */
export function settleWithin<T>(promise: Promise<T>, ms: number, late: () => T, after: After = afterTimeout): Promise<T> {
  let cancel = () => {};
  const timedOut = new Promise<T>((resolve) => (cancel = after(Math.min(ms, MAX_TIMER_MS), () => resolve(late()))));
  return Promise.race([promise, timedOut]).finally(() => cancel());
}
