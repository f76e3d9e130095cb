/**
 * The log gaps open now: the `log_gap` incidents inbox.watch() keeps (any process's watcher), each an
 * event the rack sent that this inbox never stored, for `inbox.health()`. Read from the incidents
 * table, so a probe costs one statement however long the log; a schema from before that table
 * (version 6) has none to read. The console's app view reads them too.
 */
import { incidentFields, readOpenIncidents } from '../operate/open-incidents.js';
import type { Query } from '../operate/query.js';
import type { TableNames } from '../schema/table-name.js';
import { toDate } from '../rows.js';

/** A delivery that implies the missing event. */
export interface LogGapEvidence {
  /** The delivery's id (`inbox.get(id)`). */
  readonly deliveryId: string;
  /** Its action. */
  readonly action: string;
  /** Its event's own timestamp, as sent. */
  readonly eventTime: string;
  /** When it was stored (ISO). */
  readonly receivedAt: string;
}

/** One event the rack sent and this inbox never stored, as the watcher's `logGaps` rule last found it. */
export interface OpenLogGap {
  /** The incident's key: `log_gap:<app>:<missing action>:<id>`. */
  readonly key: string;
  /** `critical` when the rack certainly sent it; `warning` for a promote's outcome, which it may not have. */
  readonly severity: 'critical' | 'warning';
  /** One line for people. */
  readonly summary: string;
  /** The app. */
  readonly app: string;
  /** The release id (`""` for an app's creation) or the `tick_id`. */
  readonly id: string;
  /** The action that never arrived; `a|b` when the rack sent one of them. */
  readonly missing: string;
  /** The deliveries that imply it, oldest first. */
  readonly evidence: readonly LogGapEvidence[];
  /** The oldest evidence's event time. */
  readonly since: Date;
  /** When the watcher opened the incident. */
  readonly openedAt: Date;
}

/** The open log gaps, oldest first; `undefined` when the schema has no incidents table. */
export async function readLogGaps(query: Query, names: TableNames): Promise<OpenLogGap[] | undefined> {
  const rows = await readOpenIncidents(query, names, 'key, severity, summary, since, opened_at, fields', "rule = 'log_gap'", 'since, id');
  return rows?.map((row) => {
    const fields = incidentFields(row);
    return {
      key: String(row['key']),
      severity: row['severity'] === 'critical' ? 'critical' : 'warning',
      summary: String(row['summary']),
      app: String(fields['app']),
      id: String(fields['id']),
      missing: String(fields['missing']),
      evidence: Array.isArray(fields['evidence']) ? (fields['evidence'] as LogGapEvidence[]) : [],
      since: toDate(row['since']),
      openedAt: toDate(row['opened_at']),
    };
  });
}
