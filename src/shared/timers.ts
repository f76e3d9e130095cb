/** The longest a timer waits in Node (and browsers): past it, setTimeout fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `promise`, or what `late()` gives if it has not settled within `ms` (a bound for a read that can
 * wait forever without failing: a silent host, a stuck pool). The timer ends with the race.
 */
export function settleWithin<T>(promise: Promise<T>, ms: number, late: () => T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late()), Math.min(ms, MAX_TIMER_MS));
  });
  return Promise.race([promise, timedOut]).finally(() => clearTimeout(timer));
}
