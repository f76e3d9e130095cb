/**
 * GET /api/gaps: what inbox.watch() keeps open about events that never arrived. The log gaps (its
 * `logGaps` rule: the log itself shows the event was sent) with the deliveries that imply them,
 * and the scheduled reconcile's gaps (the rack's API proves the send) with their proof and, for a
 * gap reconcile recorded, the delivery it was stored as; and whether that reconcile is failing.
 */
import type { OpenLogGap, ReconcileStatus } from '../../../inbox/facade/index.js';

export interface GapsPayload {
  /** `null` on a schema without an incidents table. */
  readonly logGaps: readonly OpenLogGap[] | null;
  /** `null` on a schema without an incidents table. */
  readonly reconcile: ReconcileStatus | null;
  readonly now: string;
}

export async function openGaps(
  logGaps: () => Promise<readonly OpenLogGap[] | undefined>,
  reconcile: () => Promise<ReconcileStatus | undefined>,
): Promise<GapsPayload> {
  const [log, reconciled] = await Promise.all([logGaps(), reconcile()]);
  return { logGaps: log ?? null, reconcile: reconciled ?? null, now: new Date().toISOString() };
}
