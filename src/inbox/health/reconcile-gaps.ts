/**
 * What the scheduled reconcile of inbox.watch() keeps open (any process's watcher): each gap, an
 * event the rack's API proves it sent that this inbox does not hold, with its proof; and whether
 * the reconcile itself is failing or its token about to lapse. Read from the incidents table, for
 * `inbox.health()` and the console's gaps view; a schema from before that table has none.
 */
import { incidentFields, readOpenIncidents } from '../operate/open-incidents.js';
import type { Row } from '../../database/driver.js';
import type { Query } from '../operate/query.js';
import type { TableNames } from '../schema/table-name.js';
import type { ReconciledEvidence } from '../types.js';
import { toDate } from '../rows.js';

/** The record and field of the rack's API that prove the send: the same proof a recorded delivery keeps. */
export type ReconcileGapEvidence = ReconciledEvidence;

/** One event the rack sent that this inbox does not hold, as the scheduled reconcile last found it. */
export interface OpenReconcileGap {
  /** The incident's key: `reconcile_gap:<app>:<action>:<id>`. */
  readonly key: string;
  /** One line for people. */
  readonly summary: string;
  /** The missing event's action. */
  readonly action: string;
  /** The app. */
  readonly app: string;
  /** The build or release id, the `tick_id`, or the budget stamp's time. */
  readonly id: string;
  /** `success` or `error`, for `build:create`; `null` otherwise. */
  readonly status: string | null;
  /** The proof. */
  readonly evidence: ReconcileGapEvidence;
  /** The delivery it was stored as, when reconcile recorded it; `null` otherwise. */
  readonly recorded: {
    /** The delivery's id (`inbox.get(id)`). */
    readonly id: string;
  } | null;
  /** When the proof says it was sent. */
  readonly since: Date;
  /** When the watcher first found it. */
  readonly openedAt: Date;
}

/** The scheduled reconcile itself in trouble: a failing pass (`reconcile_failed`) or a token about to lapse (`reconcile_token`). */
export interface ReconcileProblem {
  /** Which. */
  readonly rule: 'reconcile_failed' | 'reconcile_token';
  /** One line for people (a failure's code and reason; never the token). */
  readonly summary: string;
  /** A failure's code (`rack_auth_invalid`, `rack_unreachable`, ...); `null` for the token's warning. */
  readonly code: string | null;
  /** Since when. */
  readonly since: Date;
}

/** The scheduled reconcile's open incidents. */
export interface ReconcileStatus {
  /** The gaps open, oldest proof first. */
  readonly gaps: readonly OpenReconcileGap[];
  /** A failing pass, or a token about to lapse; empty when neither. */
  readonly problems: readonly ReconcileProblem[];
}

const textOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const text = (value: unknown): string => textOrNull(value) ?? '';

function evidenceOf(value: unknown): ReconcileGapEvidence {
  const evidence = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  return { route: text(evidence['route']), field: text(evidence['field']), value: text(evidence['value']), at: text(evidence['at']) };
}

/** The delivery a gap was recorded as (`recorded: { id }`), read defensively; `null` when none. */
export function recordedOf(value: unknown): { id: string } | null {
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id !== '' ? { id } : null;
}

/** The open gaps and problems of the scheduled reconcile; `undefined` when the schema has no incidents table. */
export async function readReconcileStatus(query: Query, names: TableNames): Promise<ReconcileStatus | undefined> {
  const rows = await readOpenIncidents(
    query,
    names,
    'rule, key, summary, since, opened_at, fields',
    "rule IN ('reconcile_gap', 'reconcile_failed', 'reconcile_token')",
    'since, id',
  );
  if (rows === undefined) return undefined;
  const status = { gaps: [] as OpenReconcileGap[], problems: [] as ReconcileProblem[] };
  for (const row of rows) {
    if (row['rule'] === 'reconcile_gap') status.gaps.push(openGapOf(row));
    else
      status.problems.push({
        rule: row['rule'] === 'reconcile_failed' ? 'reconcile_failed' : 'reconcile_token',
        summary: String(row['summary']),
        code: textOrNull(incidentFields(row)['code']),
        since: toDate(row['since']),
      });
  }
  return status;
}

/** A `reconcile_gap` incident's row (its fields read defensively): for health, and for the next pass of the watcher. */
export function openGapOf(row: Row): OpenReconcileGap {
  const fields = incidentFields(row);
  return {
    key: String(row['key']),
    summary: String(row['summary']),
    action: text(fields['action']),
    app: text(fields['app']),
    id: text(fields['id']),
    status: textOrNull(fields['status']),
    evidence: evidenceOf(fields['evidence']),
    recorded: recordedOf(fields['recorded']),
    since: toDate(row['since']),
    openedAt: toDate(row['opened_at']),
  };
}
