/** How long to wait before attempt `failedAttempt + 1`: exponential, capped, with full jitter. */
export interface BackoffOptions {
  /**
   * The first retry waits up to this long, in ms; each later one up to twice the one before.
   *
   * @defaultValue `1000`
   */
  baseMs?: number;
  /**
   * No wait is longer, in ms.
   *
   * @defaultValue `3600000` (one hour)
   */
  maxMs?: number;
  /**
   * `'full'`: a random wait up to the exponential step (never below a tenth of it); `'none'`: exactly the step.
   *
   * @defaultValue `'full'`
   */
  jitter?: 'full' | 'none';
}

export type ResolvedBackoff = Readonly<Required<BackoffOptions>>;

export function resolveBackoff(options: BackoffOptions = {}): ResolvedBackoff {
  const baseMs = options.baseMs ?? 1000;
  const maxMs = options.maxMs ?? 3_600_000;
  const jitter = options.jitter ?? 'full';
  if (!(baseMs >= 0) || !Number.isFinite(baseMs))
    throw new RangeError(`backoff.baseMs must be a finite number >= 0, got ${String(baseMs)}`);
  if (!(maxMs >= baseMs) || !Number.isFinite(maxMs))
    throw new RangeError(`backoff.maxMs must be finite and >= baseMs, got ${String(maxMs)}`);
  if (jitter !== 'full' && jitter !== 'none')
    throw new RangeError(`backoff.jitter must be 'full' or 'none', got ${JSON.stringify(jitter)}`);
  return { baseMs, maxMs, jitter };
}

/**
 * Full jitter (a random wait between 0 and the step) spreads the retries of deliveries that failed
 * together, e.g. during an outage of the service their handlers call. Never below 1/10 of the
 * step, so a retry is not immediate by chance.
 */
export function retryDelayMs(backoff: ResolvedBackoff, failedAttempt: number, random: () => number = Math.random): number {
  const step = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(60, Math.max(0, failedAttempt - 1)));
  if (backoff.jitter === 'none') return step;
  return Math.round(step * (0.1 + 0.9 * random()));
}
