/**
 * What the scheduled reconcile tells, as findings: one per gap (`reconcile_gap`), one for a pass
 * that failed (`reconcile_failed`), one for a token about to lapse (`reconcile_token`). Pure: the
 * pass (../reconcile-pass.ts) reads the rack and keeps the incidents.
 */
import type { RackClient } from '../../../rack-api/client.js';
import type { ReconcileGap } from '../../../reconcile/types.js';
import { describeThrown } from '../../../shared/thrown.js';
import { recordedOf } from '../../health/reconcile-gaps.js';
import { formatDuration, formatTime, type Finding } from '../incidents.js';

export function gapFinding(gap: ReconcileGap, now: Date): Finding {
  const { route, field, value, at } = gap.evidence;
  const proofAt = new Date(at);
  const since = Number.isNaN(proofAt.getTime()) ? now : proofAt;
  const recorded = recordedOf((gap as { recorded?: unknown }).recorded);
  const status = gap.status === undefined ? '' : ` (${gap.status})`;
  return {
    rule: 'reconcile_gap',
    severity: 'critical',
    // One per missing event (action, app, id), so a gap found again is the same incident.
    key: `reconcile_gap:${gap.app}:${gap.action}:${gap.id}`,
    since,
    summary:
      `${gap.app}: ${gap.action}${status} ${gap.id} was sent by the rack at ${formatTime(since, now)} and never arrived ` +
      `(proof: GET ${route} ${field}=${value}); the rack never sends it again` +
      (recorded === null ? ': run its handler by hand' : `; recorded as delivery ${recorded.id}`),
    fields: {
      action: gap.action,
      app: gap.app,
      id: gap.id,
      ...(gap.status === undefined ? {} : { status: gap.status }),
      evidence: { route, field, value, at },
      recorded,
    },
  };
}

/** A pass that failed: the typed error's code and its one line (a RackApiError never holds the token). */
export function failureFinding(error: unknown, client: RackClient, now: Date): Finding {
  const typed = error as { code?: unknown; httpStatus?: unknown; route?: unknown };
  const code = typeof typed?.code === 'string' ? typed.code : 'reconcile_failed';
  const reason = describeThrown(error)
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .slice(0, 300);
  return {
    rule: 'reconcile_failed',
    severity: 'warning',
    key: 'reconcile_failed',
    since: now,
    summary: `the scheduled reconcile against ${client.baseUrl} failed (${code}): ${reason}; no gap is looked for until it works again`,
    fields: {
      code,
      httpStatus: typeof typed?.httpStatus === 'number' ? typed.httpStatus : null,
      route: typeof typed?.route === 'string' ? typed.route : null,
      reason,
      rack: client.baseUrl,
    },
  };
}

/** The token's `expiresAt` within the warning bound (or past): mint a new one before the passes fail. */
export function tokenFinding(client: RackClient, now: Date, expiryWarningMs: number): Finding | undefined {
  const expiresAt = client.token?.expiresAt;
  if (expiresAt === undefined) return undefined;
  const expiry = new Date(expiresAt * 1000);
  const leftMs = expiry.getTime() - now.getTime();
  if (leftMs > expiryWarningMs) return undefined;
  return {
    rule: 'reconcile_token',
    severity: 'warning',
    key: 'reconcile_token',
    since: now,
    summary:
      `the rack token of the scheduled reconcile ${leftMs > 0 ? 'expires' : 'expired'} at ${formatTime(expiry, now)}` +
      `${leftMs > 0 ? ` (in ${formatDuration(leftMs)})` : ''}: mint a new read token and restart the watcher with it`,
    fields: { expiresAt: expiry.toISOString(), expiryWarningMs, rack: client.baseUrl },
  };
}
