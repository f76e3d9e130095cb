/**
 * The scheduled reconcile of inbox.watch(): every `everyMs`, under the watch lease (one watcher of
 * a fleet at a time), one reconcile() of the window, and the incidents it keeps. A gap opens once,
 * keyed by action, app and id, and stays open while passes find it; it resolves when a pass that
 * reached back to its proof no longer finds it (the event arrived; or the rack no longer shows the
 * proof: a shutdown state deleted, a budget stamp reset, an app deleted), or `keepOpenMs` after its
 * proof. A failed pass opens `reconcile_failed`, which the next good pass resolves, and leaves the
 * gaps as they are: a rack that cannot be read resolves nothing.
 */
import { reconcile } from '../../reconcile/reconcile.js';
import type { ReconcileInbox, ReconcileReport } from '../../reconcile/types.js';
import type { Row } from '../../database/driver.js';
import { openGapOf } from '../health/reconcile-gaps.js';
import type { Incidents } from './incidents.js';
import type { ResolvedReconcile } from './options.js';
import { failureFinding, gapFinding, tokenFinding } from './rules/reconcile-gaps.js';
import type { AlertRule } from './types.js';

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
