import { WebhookVerificationError } from './errors.js';
import { DEFAULT_TOLERANCE_SECONDS } from './limits.js';

export function resolveTolerance(tolerance: unknown): number {
  if (tolerance === undefined) return DEFAULT_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || Number.isNaN(tolerance) || tolerance < 0) {
    throw new RangeError(`tolerance must be a number of seconds >= 0 (or Infinity to disable the check), got ${String(tolerance)}`);
  }
  return tolerance;
}

export function resolveNow(now: unknown): number {
  if (now === undefined) return Math.floor(Date.now() / 1000);
  if (typeof now !== 'number' || !Number.isFinite(now)) {
    throw new RangeError(`now must be a finite unix time in seconds, got ${String(now)}`);
  }
  return now;
}

/** Both directions: a clock far ahead is as suspicious as a stale replay. */
export function assertInsideWindow(timestamp: number, tolerance: number, now: number): void {
  const age = now - timestamp;
  if (age > tolerance) {
    const skewSeconds = Math.ceil(age);
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `Signature timestamp is ${skewSeconds} s older than now; tolerance is ${tolerance} s. ` +
        "Either this is a replay or the receiver's clock is ahead of the rack's.",
      { timestamp, skewSeconds, tolerance },
    );
  }
  if (-age > tolerance) {
    const skewSeconds = Math.ceil(-age);
    throw new WebhookVerificationError(
      'timestamp_too_new',
      `Signature timestamp is ${skewSeconds} s in the future; tolerance is ${tolerance} s. ` +
        "The receiver's clock is behind the rack's: check NTP on both.",
      { timestamp, skewSeconds, tolerance },
    );
  }
}
