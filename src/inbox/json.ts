/**
 * Stored deliveries as JSON can carry them: dates as RFC 3339 strings, nanoseconds as a decimal
 * string. One shape for `inbox list --json` / `show --json` and the console's API, never with the
 * body or the signature (callers that show those add them on purpose).
 */
import type { DeliveryAttempt, StoredDelivery } from './types.js';

export function deliveryJson(delivery: StoredDelivery) {
  return {
    id: delivery.id,
    state: delivery.state,
    action: delivery.action,
    app: delivery.app,
    tickId: delivery.tickId,
    eventTime: delivery.eventTime,
    eventNanos: delivery.eventNanos.toString(),
    receivedAt: delivery.receivedAt.toISOString(),
    signedAt: delivery.signedAt,
    secretIndex: delivery.secretIndex,
    attempts: delivery.attempts,
    runAt: delivery.runAt?.toISOString() ?? null,
    lastError: delivery.lastError,
    doneAt: delivery.doneAt?.toISOString() ?? null,
    replayedAt: delivery.replayedAt?.toISOString() ?? null,
    duplicateOf: delivery.duplicateOf,
    origin: delivery.origin,
    evidence: delivery.evidence,
  };
}

/** A stored delivery as `inbox list --json` and the console's API send it. */
export type DeliveryJson = ReturnType<typeof deliveryJson>;

export function attemptJson(attempt: DeliveryAttempt) {
  return { ...attempt, startedAt: attempt.startedAt.toISOString(), finishedAt: attempt.finishedAt?.toISOString() ?? null };
}

/** One attempt as `inbox show --json` and the console's API send it. */
export type AttemptJson = ReturnType<typeof attemptJson>;
