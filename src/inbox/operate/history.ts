/**
 * The inbox hour by hour over the last day or week: what was accepted, repeated, refused, retried
 * and went dead, and how long deliveries waited from stored to processed. For the console's stats
 * view and `rack-webhooks inbox stats --history`. Hours come from the database's clock.
 */
import { inboxError } from '../../database/errors.js';
import type { Query } from './query.js';
import type { TableNames } from '../schema/table-name.js';

const HOURS = { day: 24, week: 168 };
export type HistorySpan = keyof typeof HOURS;

export interface HistoryHour {
  /** The hour's start, ISO 8601 UTC. */
  readonly hour: string;
  /** Deliveries stored as new in this hour (every state but `duplicate`). */
  readonly accepted: number;
  /** Deliveries stored as a repeat of an earlier event (state `duplicate`). */
  readonly duplicate: number;
  /** Requests refused (bad signature, too old, ...), from the refusals table; `null` when it does not exist. */
  readonly refused: number | null;
  /** Attempts after a delivery's first that started in this hour. */
  readonly retried: number;
  /** Deliveries dead now whose last attempt ended in this hour. */
  readonly dead: number;
  /** Deliveries first processed in this hour (not retried or replayed by hand). */
  readonly processed: number;
  /** Of those, the median time from stored to processed, in ms; `null` when none. */
  readonly p50Ms: number | null;
  /** The 95th percentile of the same. */
  readonly p95Ms: number | null;
}

export interface InboxHistory {
  readonly span: HistorySpan;
  /** Oldest first; the last is the current hour, so far. */
  readonly hours: readonly HistoryHour[];
  /** False when the refusals table does not exist (an older schema): `refused` is `null` then. */
  readonly refusalsRecorded: boolean;
  /** Workers whose heartbeat is under 3 beats old; `null` without the workers table (an older schema). */
  readonly liveWorkers: number | null;
}

const HOUR_MS = 3_600_000;
const hourKey = (column: string) => `(extract(epoch FROM date_trunc('hour', ${column})) * 1000)::bigint::text`;

export async function readHistory(query: Query, names: TableNames, span: HistorySpan): Promise<InboxHistory> {
  if (!Object.hasOwn(HOURS, span)) throw new TypeError(`span must be "day" or "week", got ${JSON.stringify(span)}`);
  const { deliveries: t, attempts: a, refusals, workers } = names;
  try {
    const [clock] = await query(
      `SELECT ${hourKey('now()')} AS now_hour, to_regclass($1) IS NOT NULL AS refusals, to_regclass($2) IS NOT NULL AS workers`,
      [refusals, workers],
    );
    const nowHour = Number(clock!['now_hour']);
    const startMs = nowHour - (HOURS[span] - 1) * HOUR_MS;
    const from = new Date(startMs).toISOString();
    const refusalsRecorded = clock!['refusals'] === true;
    // A worker is live while its last heartbeat is under 3 of its own beats old.
    const [live] =
      clock!['workers'] === true
        ? await query(`SELECT count(*)::int AS n FROM ${workers} WHERE last_seen_at > now() - make_interval(secs => 3 * beat_ms / 1000.0)`)
        : [];
    const [stored, retried, dead, processed, refused] = (
      await Promise.all([
        query(
          `SELECT ${hourKey('received_at')} AS h, count(*) FILTER (WHERE state <> 'duplicate')::int AS accepted,
                count(*) FILTER (WHERE state = 'duplicate')::int AS duplicate
           FROM ${t} WHERE received_at >= $1::timestamptz GROUP BY 1`,
          [from],
        ),
        query(
          `SELECT ${hourKey('started_at')} AS h, count(*)::int AS n FROM ${a} WHERE started_at >= $1::timestamptz AND attempt > 1 GROUP BY 1`,
          [from],
        ),
        // The last attempt of each dead delivery: its end is when the delivery went dead.
        query(
          `SELECT ${hourKey('x.finished_at')} AS h, count(*)::int AS n
           FROM ${t} AS d JOIN ${a} AS x ON x.delivery_id = d.id AND x.attempt = d.attempts
          WHERE d.state = 'dead' AND x.finished_at >= $1::timestamptz GROUP BY 1`,
          [from],
        ),
        // A delivery retried or replayed by hand has attempt_base > 0: its wait is the operator's, not the pipe's.
        query(
          `SELECT ${hourKey('x.finished_at')} AS h, count(*)::int AS n,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM x.finished_at - d.received_at) * 1000) AS p50,
                percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM x.finished_at - d.received_at) * 1000) AS p95
           FROM ${a} AS x JOIN ${t} AS d ON d.id = x.delivery_id
          WHERE x.outcome = 'succeeded' AND x.started_at >= $1::timestamptz - interval '1 hour' AND x.finished_at >= $1::timestamptz
            AND d.attempt_base = 0
          GROUP BY 1`,
          [from],
        ),
        refusalsRecorded
          ? query(`SELECT ${hourKey('minute')} AS h, sum(count)::int AS n FROM ${refusals} WHERE minute >= $1::timestamptz GROUP BY 1`, [
              from,
            ])
          : Promise.resolve([]),
      ])
    ).map((rows) => new Map(rows.map((row) => [Number(row['h']), row])));
    const num = (value: unknown) => (value === null || value === undefined ? 0 : Number(value));
    const ms = (value: unknown) => (value === null || value === undefined ? null : Math.round(Number(value)));
    const hours: HistoryHour[] = [];
    for (let at = startMs; at <= nowHour; at += HOUR_MS) {
      const s = stored!.get(at);
      const p = processed!.get(at);
      hours.push({
        hour: new Date(at).toISOString(),
        accepted: num(s?.['accepted']),
        duplicate: num(s?.['duplicate']),
        refused: refusalsRecorded ? num(refused!.get(at)?.['n']) : null,
        retried: num(retried!.get(at)?.['n']),
        dead: num(dead!.get(at)?.['n']),
        processed: num(p?.['n']),
        p50Ms: ms(p?.['p50']),
        p95Ms: ms(p?.['p95']),
      });
    }
    return { span, hours, refusalsRecorded, liveWorkers: live === undefined ? null : Number(live['n']) };
  } catch (error) {
    throw inboxError(error, names.display, 'reading the hourly history');
  }
}
