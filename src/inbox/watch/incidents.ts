import type { Driver, Row } from '../../database/driver.js';
import { incidentFields, readOpenIncidents } from '../operate/open-incidents.js';
import { failingAs, type Query } from '../operate/query.js';
import { watchTables, type TableNames } from '../schema/table-name.js';
import type { Alert, AlertRule, AlertSeverity } from './types.js';
import { toDate, toDateOrNull } from '../rows.js';

/** A condition a rule found holding now, past its bound: the same key on the next evaluation means the same incident. */
export type Finding = Pick<Alert, 'rule' | 'severity' | 'key' | 'since' | 'summary' | 'fields'>;

const COLUMNS = 'id::text AS id, rule, key, severity, since, opened_at, resolved_at, summary, fields, open_sent, resolve_sent';

/** A duration for people: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h${minutes % 60 === 0 ? '' : ` ${minutes % 60} min`}`;
  return `${Math.floor(hours / 24)} d${hours % 24 === 0 ? '' : ` ${hours % 24} h`}`;
}

/** `10:42:07 UTC` today or `2026-04-27 10:42 UTC` otherwise, against `now`. */
export function formatTime(at: Date, now: Date): string {
  const iso = at.toISOString();
  return iso.slice(0, 10) === now.toISOString().slice(0, 10) ? `${iso.slice(11, 19)} UTC` : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** A statement whose failure is told as the inbox's error, saying what was being done. */
export type GuardedQuery = (text: string, params: readonly unknown[], doing: string) => Promise<Row[]>;

export const guardedQuery =
  (driver: Driver, names: TableNames): GuardedQuery =>
  (text, params, doing) =>
    failingAs(names.display, doing, () => driver.query(text, params));

/** One open incident, as a person reads it: no fields, which may be long (delivery ids). */
export type OpenAlert = Pick<Alert, 'rule' | 'severity' | 'key' | 'summary' | 'since' | 'openedAt'>;

/** What every view of an incident shows, from its row. */
const incidentOf = (row: Row): OpenAlert => ({
  rule: String(row['rule']) as AlertRule,
  severity: String(row['severity']) as AlertSeverity,
  key: String(row['key']),
  summary: String(row['summary']),
  since: toDate(row['since']),
  openedAt: toDate(row['opened_at']),
});

/**
 * The alerts open now, read without a running watcher (any process's watcher opened them), for
 * `rack-webhooks inbox stats` and the console's stats view: critical first, then oldest first;
 * `undefined` when the schema is from before the incidents table (version 6).
 */
export async function readOpenAlerts(query: Query, names: TableNames): Promise<OpenAlert[] | undefined> {
  const columns = 'rule, key, severity, summary, since, opened_at';
  const rows = await failingAs(names.display, 'reading open alerts', () =>
    readOpenIncidents(query, names, columns, 'true', "severity = 'critical' DESC, id"),
  );
  return rows?.map(incidentOf);
}

/** The incidents table: open incidents, their resolution, and which alerts onAlert has accepted. */
export class Incidents {
  readonly #table: string;

  constructor(
    private readonly query: GuardedQuery,
    private readonly names: TableNames,
  ) {
    this.#table = watchTables(names).incidents;
  }

  toAlert(row: Row): Alert {
    const resolvedAt = toDateOrNull(row['resolved_at']);
    const { rule, severity, key, summary, since, openedAt } = incidentOf(row);
    return {
      status: resolvedAt === null ? 'open' : 'resolved',
      rule,
      severity,
      key,
      incidentId: String(row['id']),
      summary: resolvedAt === null ? summary : `resolved after ${formatDuration(resolvedAt.getTime() - openedAt.getTime())}: ${summary}`,
      since,
      openedAt,
      resolvedAt,
      table: this.names.display,
      fields: incidentFields(row),
    };
  }

  /** Open incidents, oldest first. */
  async open(): Promise<Row[]> {
    return this.query(`SELECT ${COLUMNS} FROM ${this.#table} WHERE resolved_at IS NULL ORDER BY id`, [], 'reading open incidents');
  }

  /** Alerts onAlert has not accepted yet (it threw, or the process stopped before it was called). */
  async unsent(): Promise<Alert[]> {
    const rows = await this.query(
      `SELECT ${COLUMNS} FROM ${this.#table} WHERE NOT open_sent OR (resolved_at IS NOT NULL AND NOT resolve_sent) ORDER BY id`,
      [],
      'reading unsent alerts',
    );
    // An incident opened and resolved before either alert went out still tells both, in order.
    return rows.flatMap((row) => {
      const alert = this.toAlert(row);
      if (row['open_sent'] === true || alert.status === 'open') return [alert];
      return [{ ...alert, status: 'open' as const, resolvedAt: null, summary: String(row['summary']) }, alert];
    });
  }

  /**
   * Brings the incidents of `open` (one rule's, as read before) in line with what was found now: a
   * finding with no open incident of its key opens one, one with an incident keeps its summary and
   * fields current (no alert), and an open incident not found again resolves, unless `keep` says
   * it stands.
   */
  async apply(open: readonly Row[], findings: readonly Finding[], now: Date, keep: (row: Row) => boolean = () => false): Promise<void> {
    for (const finding of findings) {
      const existing = open.find((row) => row['key'] === finding.key);
      // DO NOTHING when an incident of its key is open already.
      if (existing === undefined)
        await this.query(
          `INSERT INTO ${this.#table} (rule, key, severity, since, opened_at, summary, fields) VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (key) WHERE resolved_at IS NULL DO NOTHING`,
          [finding.rule, finding.key, finding.severity, finding.since, now, finding.summary, JSON.stringify(finding.fields)],
          'opening an incident',
        );
      else
        await this.query(
          `UPDATE ${this.#table} SET summary = $2, fields = $3 WHERE id = $1 AND resolved_at IS NULL`,
          [existing['id'], finding.summary, JSON.stringify(finding.fields)],
          'updating an incident',
        );
    }
    const found = new Set(findings.map((finding) => finding.key));
    for (const row of open) {
      if (found.has(String(row['key'])) || keep(row)) continue;
      await this.query(
        `UPDATE ${this.#table} SET resolved_at = $2 WHERE id = $1 AND resolved_at IS NULL`,
        [row['id'], now],
        'resolving an incident',
      );
    }
  }

  /** Records that onAlert accepted this alert, so it is never sent again. */
  async sent(alert: Alert): Promise<void> {
    const column = alert.status === 'open' ? 'open_sent' : 'resolve_sent';
    await this.query(`UPDATE ${this.#table} SET ${column} = true WHERE id = $1`, [alert.incidentId], 'recording a sent alert');
  }
}
