/** The longest a timer waits in Node (and browsers): past it, setTimeout fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
