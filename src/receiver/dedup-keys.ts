import { getDefaultBackend } from '../crypto/index.js';
import type { DedupClaim } from '../dedup/store.js';
import type { AnyWebhookEvent } from '../events/types.js';
import { eventContent, tickIdOf } from './same-event.js';

/**
 * A delivery's two dedup keys (see ./same-event.ts for what "the same event" means):
 *
 * - the body key, `body:<sha256 of the raw body>`: a byte-identical copy, whatever its `t`;
 * - the event key, `event:<action>:<tick_id>:<sha256 of what the event says apart from time>`,
 *   for events that carry a `tick_id`: the same event sent again with new times.
 *
 * The spec's replay key `(t, sha256(body))` is the body key narrowed to one `t`, so the body key
 * covers it; the spec's `(tick_id, action)` would collapse two different facts a deployed rack
 * sends under one tick, so the event key also holds what they say.
 */
export interface DeliveryKeys {
  readonly bodyKey: string;
  /** Undefined when the event carries no `tick_id`. */
  readonly eventKey: string | undefined;
}

/** SHA-256, base64url: in this tick on Node, through Web Crypto elsewhere. */
export function sha256(raw: Uint8Array | string): string | Promise<string> {
  const backend = getDefaultBackend();
  return backend.sha256Sync !== undefined ? backend.sha256Sync(raw) : backend.sha256(raw);
}

function keysFrom(bodySha256: string, event: AnyWebhookEvent, tickId: string | undefined, contentSha256: string | undefined): DeliveryKeys {
  return {
    bodyKey: `body:${bodySha256}`,
    eventKey: tickId === undefined ? undefined : `event:${event.action}:${tickId}:${contentSha256!}`,
  };
}

/** Both keys; synchronous where the hash is (Node), a promise elsewhere. */
export function deliveryKeys(raw: Uint8Array | string, event: AnyWebhookEvent): DeliveryKeys | Promise<DeliveryKeys> {
  const tickId = tickIdOf(event);
  const body = sha256(raw);
  const content = tickId === undefined ? undefined : sha256(eventContent(event));
  if (typeof body === 'string' && typeof content !== 'object') return keysFrom(body, event, tickId, content);
  return Promise.all([body, content]).then(([bodySha, contentSha]) => keysFrom(bodySha, event, tickId, contentSha));
}

/**
 * The keys as dedup store claims. Both are held for `eventKeyTtl`; the body key at least as long
 * as its `t` can still pass the time window, so that a replay inside the window is always caught.
 */
export function dedupClaims(
  keys: DeliveryKeys,
  timestamp: number,
  tolerance: number,
  nowSeconds: number,
  eventKeyTtl: number,
): DedupClaim[] {
  const windowTtl = Number.isFinite(tolerance) ? Math.max(1, timestamp + tolerance - nowSeconds + 1) : eventKeyTtl;
  const claims: DedupClaim[] = [{ key: keys.bodyKey, ttlSeconds: Math.max(windowTtl, eventKeyTtl) }];
  if (keys.eventKey !== undefined) claims.push({ key: keys.eventKey, ttlSeconds: eventKeyTtl });
  return claims;
}
