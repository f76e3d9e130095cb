// The server's clock, as far as the page can tell: relative times and countdowns are judged
// against it, so a browser whose clock drifts still shows the right time left.

let offsetMs = 0;

export function now(): number {
  return Date.now() + offsetMs;
}

/** Called with the `now` of a response. */
export function syncClock(serverNow: string | undefined): void {
  const ms = serverNow === undefined ? Number.NaN : Date.parse(serverNow);
  if (!Number.isNaN(ms)) offsetMs = ms - Date.now();
}
