import type { DedupClaim } from '../dedup/store.js';
import type { AnyWebhookEvent } from '../events/types.js';

/**
 * The spec's two keys. The replay key `(t, sha256(body))` is held exactly while `t` can still
 * pass the time window (a later copy is refused by the time check instead); with the window
 * turned off it is held as long as the event key. The event key `(tick_id, action)` catches a
 * duplicate that a proxy re-sent with a new `t`.
 */
export function dedupClaims(
  /** SHA-256 of the raw body, base64url. */
  bodySha256: string,
  timestamp: number,
  event: AnyWebhookEvent,
  tolerance: number,
  nowSeconds: number,
  eventKeyTtl: number,
): DedupClaim[] {
  const replayTtl = Number.isFinite(tolerance) ? Math.max(1, timestamp + tolerance - nowSeconds + 1) : eventKeyTtl;
  const claims: DedupClaim[] = [{ key: replayKey(timestamp, bodySha256), ttlSeconds: replayTtl }];
  const key = eventKey(event);
  if (key !== undefined) claims.push({ key, ttlSeconds: eventKeyTtl });
  return claims;
}

export function replayKey(timestamp: number, bodySha256: string): string {
  return `replay:${timestamp}:${bodySha256}`;
}

export function eventKey(event: AnyWebhookEvent): string | undefined {
  const tickId = (event.data as Record<string, unknown>)['tick_id'];
  return typeof tickId === 'string' && tickId !== '' ? `event:${event.action}:${tickId}` : undefined;
}
