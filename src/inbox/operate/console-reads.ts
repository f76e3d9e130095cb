/**
 * The reads the console makes on its own, over one statement at a time (the CLI's pool or
 * PGlite): a fingerprint of the table that moves whenever a row is stored or changes state, the
 * ids stored after a given one, and what needs an operator in each app. Here, with the inbox's
 * other SQL, so the console holds none.
 */
import type { TableNames } from '../schema/table-name.js';
import { failingAs, type Query } from './query.js';

/**
 * Per state: how many rows, their attempts, the newest id. Any store, retry, replay or prune
 * changes it; it costs one index-only aggregate.
 */
export async function readChangeFingerprint(query: Query, names: TableNames): Promise<string> {
  const rows = await failingAs(names.display, 'watching for changes', () =>
    query(
      `SELECT state, count(*)::int8::text AS n, coalesce(sum(attempts), 0)::int8::text AS a, coalesce(max(id), 0)::text AS m
         FROM ${names.deliveries} GROUP BY state ORDER BY state`,
    ),
  );
  return rows.map((row) => `${String(row['state'])}:${String(row['n'])}:${String(row['a'])}:${String(row['m'])}`).join(' ');
}

/** Up to `limit` ids above `after`, in id order. */
export async function readIdsAfter(query: Query, names: TableNames, after: bigint, limit: number): Promise<bigint[]> {
  const table = names.deliveries;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a whole number from 1, got ${String(limit)}`);
  // ORDER BY the column, not the text alias: "99" sorts after "1000" as text.
  const rows = await failingAs(names.display, 'reading new deliveries for the apps', () =>
    query(`SELECT id::text AS id FROM ${table} WHERE id > $1::bigint ORDER BY ${table}.id LIMIT $2::int`, [after.toString(), limit]),
  );
  return rows.map((row) => BigInt(String(row['id'])));
}

/**
 * Per app: its dead deliveries, the pending ones that already failed (retrying), and everything
 * still pending or running. Read through the queue's state index: only rows in those states are
 * visited, however long the table's history.
 */
export interface AppAttention {
  readonly dead: number;
  /** Pending again after a failed attempt. */
  readonly failing: number;
  /** Pending or running. */
  readonly pending: number;
}

export async function readAppAttention(query: Query, names: TableNames): Promise<Map<string, AppAttention>> {
  const rows = await failingAs(names.display, 'counting what each app needs', () =>
    query(
      `SELECT q.app, count(*) FILTER (WHERE q.state = 'dead')::int AS dead,
              count(*) FILTER (WHERE q.state = 'pending' AND d.last_error IS NOT NULL)::int AS failing,
              count(*) FILTER (WHERE q.state IN ('pending', 'running'))::int AS pending
         FROM ${names.queue} AS q JOIN ${names.deliveries} AS d ON d.id = q.id
        WHERE q.state IN ('dead', 'pending', 'running') AND q.app IS NOT NULL
        GROUP BY q.app`,
    ),
  );
  return new Map(
    rows.map((row) => [
      String(row['app']),
      { dead: Number(row['dead']), failing: Number(row['failing']), pending: Number(row['pending']) },
    ]),
  );
}
