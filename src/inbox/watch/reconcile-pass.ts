/**
 * The scheduled reconcile of inbox.watch(): every `everyMs`, under the watch lease (one watcher of
 * a fleet at a time), one reconcile() of the window, and the incidents it keeps. A gap opens once,
 * keyed by action, app and id, and stays open while passes find it; it resolves when a pass that
 * reached back to its proof no longer finds it (the event arrived; or the rack no longer shows the
 * proof: a shutdown state deleted, a budget stamp reset, an app deleted), or `keepOpenMs` after its
 * proof. A failed pass opens `reconcile_failed`, which the next good pass resolves, and leaves the
 * gaps as they are: a rack that cannot be read resolves nothing. What it tells, as findings: one per
 * gap (`reconcile_gap`), one for a pass that failed (`reconcile_failed`), one for a token about to
 * lapse (`reconcile_token`).
 */
import type { RackClient } from '../../rack-api/client.js';
import { reconcile } from '../../reconcile/reconcile.js';
import type { ReconcileGap, ReconcileInbox, ReconcileReport } from '../../reconcile/types.js';
import type { Row } from '../../database/driver.js';
import { describeThrown } from '../../shared/thrown.js';
import { openGapOf, recordedOf } from '../health/reconcile-gaps.js';
import { formatDuration, formatTime, type Finding, type Incidents } from './incidents.js';
import type { ResolvedReconcile } from './options.js';
import type { AlertRule } from './types.js';

function gapFinding(gap: ReconcileGap, now: Date): Finding {
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
function failureFinding(error: unknown, client: RackClient, now: Date): Finding {
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
function tokenFinding(client: RackClient, now: Date, expiryWarningMs: number): Finding | undefined {
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

/** The proof's time of an open gap's incident, in ms; undefined when unreadable. */
function proofMs(row: Row): number | undefined {
  const ms = Date.parse(openGapOf(row).evidence.at);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Runs a pass when one is due at `now` (none ran in this watcher yet, or the last began `everyMs`
 * ago) and keeps its incidents (their alerts go out with the watcher's others). It never throws
 * for the rack: a failure is the `reconcile_failed` incident.
 */
export function scheduledReconcile(inbox: ReconcileInbox, incidents: Incidents, options: ResolvedReconcile): (now: Date) => Promise<void> {
  let lastStartedMs: number | undefined;
  return async (now) => {
    if (lastStartedMs !== undefined && now.getTime() - lastStartedMs < options.everyMs) return;
    lastStartedMs = now.getTime();
    const { client, windowMs, keepOpenMs, apps, expiryWarningMs } = options;
    const open = await incidents.open();
    const openOf = (rule: AlertRule) => open.filter((row) => row['rule'] === rule);
    const gapsOpen = openOf('reconcile_gap');
    // Back to the oldest open gap's proof (so that a pass sees whether it arrived), never past keepOpenMs.
    const floorMs = now.getTime() - keepOpenMs;
    const oldestProof = Math.min(...gapsOpen.map((row) => proofMs(row) ?? Number.POSITIVE_INFINITY));
    const since = new Date(Math.max(floorMs, Math.min(now.getTime() - windowMs, oldestProof - 1)));

    const token = tokenFinding(client, now, expiryWarningMs);
    await incidents.apply(openOf('reconcile_token'), token === undefined ? [] : [token], now);

    let report: ReconcileReport;
    try {
      report = await reconcile(inbox, client, {
        since,
        ...(apps === undefined ? {} : { apps }),
        ...(options.record ? { record: true } : {}),
      });
    } catch (error) {
      await incidents.apply(openOf('reconcile_failed'), [failureFinding(error, client, now)], now);
      return;
    }
    await incidents.apply(openOf('reconcile_failed'), [], now);

    // Not found again: resolved, unless its app's lists did not reach back this time, or this
    // watcher no longer reads its app (then only keepOpenMs ends it). An app gone from the rack took its proof along.
    const uncovered = new Set(report.uncovered.map((list) => list.app));
    const unread = (app: string) => apps !== undefined && !apps.includes(app);
    await incidents.apply(
      gapsOpen,
      report.gaps.map((gap) => gapFinding(gap, now)),
      now,
      (row) => {
        const proof = proofMs(row);
        if (proof !== undefined && proof < floorMs) return false;
        const { app } = openGapOf(row);
        return uncovered.has(app) || unread(app);
      },
    );
  };
}
