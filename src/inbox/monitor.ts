/**
 * The monitor port: is the inbox well, and who looks after it. Health and readiness (probes,
 * `inbox health`), the workers' heartbeats, the refusals counted by every process, the log gaps a
 * watcher found, and starting a watcher (alerts and retention).
 */
import type { Clock } from './clock.js';
import type { Driver } from '../database/driver.js';
import { checkHealth } from './health/health.js';
import { checkReadiness } from './health/readiness.js';
import { readLogGaps, type OpenLogGap } from './health/log-gaps.js';
import { readRefusals, type RefusalQuery, type RefusalRecorder } from './health/refusals.js';
import { listWorkers } from './health/workers.js';
import type { Inbox } from './inbox.js';
import type { ReconcileInbox } from '../reconcile/types.js';
import { readReconcileStatus, type ReconcileStatus } from './health/reconcile-gaps.js';
import type { TableNames } from './schema/table-name.js';
import { startWatcher } from './watch/watcher.js';

/** The public `Inbox`'s health, workers, refusals and watch (documented there), and the open log gaps. */
export type InboxMonitor = Pick<Inbox, 'health' | 'readiness' | 'workers' | 'refusals' | 'onRefusal' | 'refusalTotals' | 'watch'> & {
  /** The log gaps a watcher keeps open, oldest first; `undefined` on a schema without an incidents table. */
  logGaps(): Promise<OpenLogGap[] | undefined>;
  /** The scheduled reconcile's open gaps and troubles (inbox.watch({ reconcile })); `undefined` on a schema without incidents. */
  reconcileStatus(): Promise<ReconcileStatus | undefined>;
};

/**
 * @param refusals - This process's counts; undefined with `recordRefusals: false`.
 * @param inbox - The inbox a watcher's scheduled reconcile reads (and records into).
 */
export function createMonitor(
  driver: Driver,
  names: TableNames,
  refusals: RefusalRecorder | undefined,
  clock: Clock,
  inbox: () => ReconcileInbox,
): InboxMonitor {
  return {
    health: (options) => checkHealth(driver, names, options ?? {}, clock),
    readiness: () => checkReadiness(driver, names),
    workers: () => listWorkers(driver, names),
    refusals: ((query?: RefusalQuery) => readRefusals(driver, names, query, clock)) as InboxMonitor['refusals'],
    onRefusal: (listener) => refusals?.subscribe(listener) ?? (() => {}),
    refusalTotals: () => refusals?.totals() ?? new Map(),
    logGaps: () => readLogGaps((text, params) => driver.query(text, params), names),
    reconcileStatus: () => readReconcileStatus((text, params) => driver.query(text, params ?? []), names),
    watch: (options) => startWatcher(driver, names, options, clock, inbox()),
  };
}
