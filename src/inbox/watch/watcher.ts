import { pause, type Clock } from '../clock.js';
import type { Driver } from '../../database/driver.js';
import { runRetentionPass } from '../retention/prune-pass.js';
import type { RetentionResult } from '../retention/options.js';
import type { TableNames } from '../schema/table-name.js';
import type { ReconcileInbox } from '../../reconcile/types.js';
import { guardedQuery, Incidents, type Finding } from './incidents.js';
import { watchLease } from './lease.js';
import { resolveWatchOptions, type ResolvedWatchOptions } from './options.js';
import { scheduledReconcile } from './reconcile-pass.js';
import { buildRules } from './rules/index.js';
import type { Rule, RuleContext } from './rules/rule.js';
import type { Alert, CheckResult, WatchOptions, Watcher } from './types.js';

const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

/**
 * Updates the incidents table from the rules' findings: a finding with no open incident of its key
 * opens one, an open incident its rule no longer finds resolves. A rule that failed to evaluate
 * leaves its incidents as they are: an unreachable table is no resolution.
 */
async function applyFindings(rules: readonly Rule[], context: RuleContext, incidents: Incidents, onError: (error: Error) => void) {
  const open = await incidents.open();
  for (const rule of rules) {
    let findings: Finding[];
    try {
      findings = (await rule.evaluate(context)).map((finding) => ({ ...finding, rule: rule.name }));
    } catch (error) {
      onError(new Error(`rule ${rule.name}: ${asError(error).message}`, { cause: error }));
      continue;
    }
    // Every key starts with its rule's name: no other rule's incident has one of these keys.
    const own = open.filter((row) => row['rule'] === rule.name);
    await incidents.apply(own, findings, context.now);
  }
}

/** Hands every alert not yet accepted to onAlert, in incident order; one that throws stays owed. */
async function sendOwed(incidents: Incidents, options: ResolvedWatchOptions): Promise<Alert[]> {
  const sent: Alert[] = [];
  const failed = new Set<string>();
  for (const alert of await incidents.unsent()) {
    // A resolve waits for its open alert.
    if (failed.has(alert.incidentId)) continue;
    try {
      await options.onAlert!(alert);
    } catch (error) {
      failed.add(alert.incidentId);
      const reason = asError(error).message;
      options.onError(new Error(`onAlert threw for ${alert.key} (${alert.status}); it is offered again at the next evaluation: ${reason}`));
      continue;
    }
    await incidents.sent(alert);
    sent.push(alert);
  }
  return sent;
}

/** `inbox` is what a scheduled reconcile reads the held events through (the inbox this watcher watches). */
export function startWatcher(
  driver: Driver,
  names: TableNames,
  watchOptions: WatchOptions | undefined,
  clock: Clock,
  inbox?: ReconcileInbox,
): Watcher {
  const options = resolveWatchOptions(watchOptions, clock);
  const query = guardedQuery(driver, names);
  const lease = watchLease(query, names, options.watcherId, options.leaseMs);
  const incidents = new Incidents(query, names);
  if (options.reconcile !== undefined && inbox === undefined) throw new TypeError('reconcile needs the inbox: call inbox.watch()');
  const reconcileIfDue = options.reconcile === undefined ? undefined : scheduledReconcile(inbox!, incidents, options.reconcile);
  const rules = buildRules(options.rules, options.retention);
  let stopping = false;
  let cancelTick: (() => void) | undefined;
  // One evaluation at a time in this watcher; retention passes run beside it, one at a time.
  let checking: Promise<unknown> = Promise.resolve();
  let pruning: Promise<RetentionResult> | undefined;
  let lastPassAt: number | undefined;

  function startPass(): Promise<RetentionResult> {
    lastPassAt = options.now().getTime();
    const running = runRetentionPass(driver, names, options.retention!, options.now(), {
      keepGoing: async () => !stopping && (await lease.take(options.now())),
      pause: (ms) => pause(clock, ms),
    }).finally(() => {
      if (pruning === running) pruning = undefined;
    });
    pruning = running;
    return running;
  }

  async function checkNow(): Promise<CheckResult> {
    const now = options.now();
    if (stopping || !(await lease.take(now))) return { evaluated: false, alerts: [] };
    let alerts: Alert[] = [];
    if (options.onAlert !== undefined) {
      await applyFindings(rules, { driver, names, now, query }, incidents, options.onError);
      // In this evaluation, so that its alerts go out with it; it fails into a reconcile_failed incident, never a throw.
      await reconcileIfDue?.(now);
      alerts = await sendOwed(incidents, options);
    }
    const retention = options.retention;
    if (
      retention !== undefined &&
      pruning === undefined &&
      (lastPassAt === undefined || now.getTime() - lastPassAt >= retention.intervalMs)
    ) {
      startPass().catch((error: unknown) => options.onError(asError(error)));
    }
    return { evaluated: true, alerts };
  }

  function check(): Promise<CheckResult> {
    const result = checking.then(checkNow, checkNow);
    checking = result.catch(() => {});
    return result;
  }

  const tick = async () => {
    cancelTick = undefined;
    try {
      await check();
    } catch (error) {
      options.onError(asError(error));
    }
    if (!stopping) cancelTick = clock.after(options.intervalMs, () => void tick(), true);
  };
  cancelTick = clock.after(0, () => void tick(), true);

  return {
    id: options.watcherId,
    check,
    async prune() {
      if (options.retention === undefined) throw new TypeError('retention is off (retention: false): nothing to prune');
      if (pruning !== undefined) await pruning.catch(() => {});
      if (stopping || !(await lease.take(options.now()))) return { ran: false, deleted: {}, total: 0 };
      return startPass();
    },
    async incidents() {
      return (await incidents.open()).map((row) => incidents.toAlert(row));
    },
    async stop() {
      stopping = true;
      cancelTick?.();
      cancelTick = undefined;
      await checking;
      await pruning?.catch(() => {});
      await lease.release().catch(() => {});
    },
  };
}
