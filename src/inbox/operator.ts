/**
 * The operator port: what a person operating an inbox reads and changes, and all that the CLI and
 * the console use of it (through src/inbox/facade/). Its statements live in operate/, the one
 * folder of statements over deliveries (health/ and watch/ read through it too); the open
 * alerts are the incidents the watcher keeps (watch/incidents.ts), read without a watcher.
 */
import type { Driver } from '../database/driver.js';
import type { Inbox } from './inbox.js';
import { readAppAttention, readChangeFingerprint, readIdsAfter, type AppAttention } from './operate/console-reads.js';
import { pruneDeliveries, replayDeliveries, retryDeliveries } from './operate/change.js';
import { readHistory, type HistorySpan, type InboxHistory } from './operate/history.js';
import type { Query } from './operate/query.js';
import { deliveryStats, getDelivery, listDeliveries } from './operate/read.js';
import type { TableNames } from './schema/table-name.js';
import { readOpenAlerts, type OpenAlert } from './watch/incidents.js';

/** The public `Inbox`'s reads and changes (documented there), and what the tools read besides. */
export type InboxOperator = Pick<Inbox, 'table' | 'list' | 'get' | 'retry' | 'replay' | 'stats' | 'prune'> & {
  /** Hour by hour over the last day or week (`inbox stats --history`, the console's stats view). */
  history(span: HistorySpan): Promise<InboxHistory>;
  /** The incidents a watcher keeps open, critical first; `undefined` on a schema without an incidents table. */
  alerts(): Promise<OpenAlert[] | undefined>;
  /** Per app: dead, failing and pending deliveries (the console's apps view). */
  appAttention(): Promise<Map<string, AppAttention>>;
  /** A fingerprint of the table that moves whenever a row is stored or changes state (the console's live updates). */
  changeFingerprint(): Promise<string>;
  /** Up to `limit` ids above `after`, in id order (the console's apps index reads new rows so). */
  idsAfter(after: bigint, limit: number): Promise<bigint[]>;
};

/**
 * @param requeued - Called after a retry or replay moved rows back to pending: wakes the workers.
 */
export function createOperator(driver: Driver, names: TableNames, requeued: () => Promise<void>): InboxOperator {
  const query: Query = (text, params) => driver.query(text, params);
  const moved = async (count: number) => {
    if (count > 0) await requeued();
    return count;
  };
  return {
    table: names.display,
    list: (options) => listDeliveries(driver, names, options),
    get: (id) => getDelivery(driver, names, id),
    retry: async (idOrFilter) => moved(await retryDeliveries(driver, names, idOrFilter)),
    replay: async (filter) => moved(await replayDeliveries(driver, names, filter)),
    stats: () => deliveryStats(driver, names),
    prune: (options) => pruneDeliveries(driver, names, { before: (options as { before: Date } | undefined)?.before as Date }),
    history: (span) => readHistory(query, names, span),
    alerts: () => readOpenAlerts(query, names),
    appAttention: () => readAppAttention(query, names),
    changeFingerprint: () => readChangeFingerprint(query, names),
    idsAfter: (after, limit) => readIdsAfter(query, names, after, limit),
  };
}
