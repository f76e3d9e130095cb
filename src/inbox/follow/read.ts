/**
 * The reads that following an inbox makes: SELECTs only, in bounded batches by id, so a read-only
 * role can run them and the workers never wait on them (no lock is taken, no row is changed).
 */
import type { Queryable } from '../../database/driver.js';
import { buildWhere } from '../operate/filter.js';
import { failingAs } from '../operate/query.js';
import { toBytes } from '../rows.js';
import type { TableNames } from '../schema/table-name.js';
import type { DeliveryFilter, DeliveryState } from '../types.js';
import type { SnapshotBounds } from './gaps.js';

/** Bodies up to this size come with their batch; a larger one is read on its own, when its turn comes. */
export const INLINE_BODY_BYTES = 64 * 1024;

export interface FollowedDelivery {
  readonly id: bigint;
  readonly action: string;
  readonly app: string | null;
  readonly state: DeliveryState;
  /** The body exactly as stored (as the rack sent it). */
  readonly body: Uint8Array;
}

/** One row of a batch. `matches` says whether the filter takes it; only those carry their facts. */
export interface FollowedRow extends Omit<FollowedDelivery, 'body'> {
  readonly matches: boolean;
  /** The body as stored, when it matches and is at most INLINE_BODY_BYTES; else read with readBody. */
  readonly body: Uint8Array | undefined;
}

/**
 * Up to `limit` rows above `after`, and the watched gaps below it that filled, in id order, read
 * with one snapshot whose bounds come along (see gaps.ts). Every row is read, the filter's or not,
 * so a gap is never confused with a row the filter leaves out.
 */
export async function readBatch(
  db: Queryable,
  names: TableNames,
  after: bigint,
  late: readonly bigint[],
  filter: DeliveryFilter,
  limit: number,
): Promise<{ rows: FollowedRow[]; snapshot: SnapshotBounds }> {
  // $1 the id after, $2 the late ids, $3 the limit, then the filter's.
  const where = buildWhere(filter, 4);
  const table = names.deliveries;
  const columns = `id, (${where.sql}) AS matches, action, app, state,
           CASE WHEN (${where.sql}) AND octet_length(body) <= ${INLINE_BODY_BYTES} THEN body END AS body`;
  // One statement: pg_current_snapshot() is the snapshot the rows are read with. The one-row
  // snapshot side keeps its bounds even when no row comes back. Two index scans, never one with
  // an OR, which could walk the whole table from its first id. The late ids as an array literal in
  // text, not an array parameter, which every client sends alike.
  const sql = `SELECT s.xmin, s.xmax, r.id::text AS id, r.matches, r.action, r.app, r.state, r.body
  FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax) s
  LEFT JOIN LATERAL (
    (SELECT ${columns} FROM ${table} WHERE id = ANY ($2::text::bigint[]))
    UNION ALL
    (SELECT ${columns} FROM ${table} WHERE id > $1::bigint ORDER BY ${table}.id LIMIT $3::int)
  ) r ON true
  ORDER BY r.id`;
  const rows = await failingAs(names.display, 'reading deliveries to forward', () =>
    db.query(sql, [after.toString(), `{${late.join(',')}}`, limit, ...where.params]),
  );
  const first = rows[0]!;
  const snapshot = { xmin: BigInt(String(first['xmin'])), xmax: BigInt(String(first['xmax'])) };
  return {
    snapshot,
    rows: rows
      .filter((row) => row['id'] !== null && row['id'] !== undefined)
      .map((row) => ({
        id: BigInt(String(row['id'])),
        matches: row['matches'] === true,
        action: String(row['action']),
        app: (row['app'] as string | null) ?? null,
        state: row['state'] as DeliveryState,
        body: row['body'] === null || row['body'] === undefined ? undefined : toBytes(row['body']),
      })),
  };
}

/** A body too large for its batch; undefined when the row is gone (pruned since). */
export async function readBody(db: Queryable, names: TableNames, id: bigint): Promise<Uint8Array | undefined> {
  const rows = await failingAs(names.display, 'reading a delivery to forward', () =>
    db.query(`SELECT body FROM ${names.deliveries} WHERE id = $1::bigint`, [id.toString()]),
  );
  return rows.length === 0 ? undefined : toBytes(rows[0]!['body']);
}

/** Where to start: after the newest row now (none given), before `fromId`, or before the first row stored at or after `since`. */
export async function startCursor(db: Queryable, names: TableNames, start: { fromId?: bigint; since?: Date }): Promise<bigint> {
  if (start.fromId !== undefined) return start.fromId - 1n;
  const table = names.deliveries;
  const rows = await failingAs(names.display, 'finding where to start', () =>
    start.since === undefined
      ? db.query(`SELECT coalesce(max(id), 0)::text AS after FROM ${table}`)
      : // The first row received since then, by the received_at index; none: the newest row now.
        db.query(
          `SELECT coalesce((SELECT min(id) - 1 FROM ${table} WHERE received_at >= $1::timestamptz),
                           (SELECT max(id) FROM ${table}), 0)::text AS after`,
          [start.since.toISOString()],
        ),
  );
  return BigInt(String(rows[0]!['after']));
}
