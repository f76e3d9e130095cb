import { WebhookDedupError } from '../../dedup/errors.js';
import { claimAll, type DedupClaim, type DedupStore } from '../../dedup/store.js';
import type { AnyWebhookEvent } from '../../events/types.js';
import { dedupClaims, deliveryKeys, type DeliveryKeys } from '../dedup-keys.js';
import type { Reporting } from '../reporting.js';
import type { VerifiedDelivery } from './verify.js';

/** Step 3 (without an inbox): hold the delivery's two keys in the dedup store. */
export type ClaimState = 'fresh' | 'duplicate' | 'unclaimed';

export interface Claimed {
  readonly state: ClaimState;
  readonly claims: readonly DedupClaim[];
}

export interface ClaimStepOptions {
  store: DedupStore;
  tolerance: number;
  eventKeyTtl: number;
  failClosed: boolean;
  reporting: Reporting;
}

export type ClaimStep = (
  verified: VerifiedDelivery,
  event: AnyWebhookEvent,
  nowSeconds: number,
  started: number,
) => Claimed | Promise<Claimed>;

export function createClaimStep({ store, tolerance, eventKeyTtl, failClosed, reporting }: ClaimStepOptions): ClaimStep {
  const storeFailed = (cause: unknown, event: AnyWebhookEvent, claims: readonly DedupClaim[], started: number): Promise<Claimed> => {
    const error = cause instanceof WebhookDedupError ? cause : new WebhookDedupError('The dedup store failed.', { cause });
    if (reporting.logging)
      reporting.log(started, {
        level: failClosed ? 'error' : 'warn',
        event: 'dedup_unavailable',
        message: failClosed
          ? 'dedup store failed; delivery refused (dedupFailure: closed)'
          : 'dedup store failed; delivery processed without dedup (dedupFailure: open)',
        action: event.action,
        code: error.code,
      });
    if (failClosed) return Promise.reject(error);
    return reporting.reportError(error, started).then(() => ({ state: 'unclaimed', claims }));
  };

  /** A store that answers synchronously (the memory store) costs no microtask turn. */
  const claimWith = (claims: DedupClaim[], event: AnyWebhookEvent, started: number): Claimed | Promise<Claimed> => {
    let fresh: boolean | Promise<boolean>;
    try {
      fresh = store.claimAllSync !== undefined ? store.claimAllSync(claims) : claimAll(store, claims);
    } catch (cause) {
      return storeFailed(cause, event, claims, started);
    }
    if (typeof fresh === 'boolean') return { state: fresh ? 'fresh' : 'duplicate', claims };
    return fresh.then(
      (isFresh): Claimed => ({ state: isFresh ? 'fresh' : 'duplicate', claims }),
      (cause: unknown) => storeFailed(cause, event, claims, started),
    );
  };

  return ({ raw, verified }, event, nowSeconds, started) => {
    const claimKeys = (keys: DeliveryKeys) =>
      claimWith(dedupClaims(keys, verified.timestamp, tolerance, nowSeconds, eventKeyTtl), event, started);
    const keys = deliveryKeys(raw, event);
    return keys instanceof Promise ? keys.then(claimKeys) : claimKeys(keys);
  };
}
