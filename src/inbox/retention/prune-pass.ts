import type { Driver } from '../../database/driver.js';
import { pruneDeliveries } from '../operate/change.js';
import { failingAs } from '../operate/query.js';
import { watchTables, type TableNames } from '../schema/table-name.js';
import type { ResolvedRetention, RetainedState, RetentionResult } from './options.js';

/** What a pass asks of whoever runs it between two batches. */
export interface PassControl {
  /** Whether to go on (the watcher is not stopping and still holds its lease, renewed here). */
  keepGoing(): Promise<boolean>;
  /** The pause between batches. */
  pause(ms: number): Promise<void>;
}

/** Resolved incidents are kept as long as the longest age kept, at least 30 days. */
const MIN_INCIDENT_AGE_MS = 30 * 86_400_000;

/**
 * One retention pass: per state, DELETE batches of at most `batchSize` rows (oldest received
 * first) until none is older than its age, pausing between batches so that no statement holds
 * locks or I/O for long and receivers' inserts go in between.
 */
export async function runRetentionPass(
  driver: Driver,
  names: TableNames,
  retention: ResolvedRetention,
  now: Date,
  control: PassControl,
): Promise<RetentionResult> {
  const deleted: Partial<Record<RetainedState, number>> = {};
  let total = 0;
  for (const [state, ageMs] of retention.ages) {
    const before = new Date(now.getTime() - ageMs);
    deleted[state] = 0;
    for (;;) {
      const count = await pruneDeliveries(driver, names, { before, states: [state], limit: retention.batchSize });
      deleted[state] += count;
      total += count;
      if (count < retention.batchSize) break;
      if (!(await control.keepGoing())) return { ran: true, deleted, total };
      await control.pause(retention.pauseMs);
    }
  }
  const incidentAge = Math.max(MIN_INCIDENT_AGE_MS, ...retention.ages.map(([, age]) => age));
  await failingAs(names.display, 'pruning resolved incidents', () =>
    driver.query(`DELETE FROM ${watchTables(names).incidents} WHERE resolved_at < $1 AND resolve_sent`, [
      new Date(now.getTime() - incidentAge),
    ]),
  );
  return { ran: true, deleted, total };
}
