/**
 * The two reads the console makes on its own, over one statement at a time (the CLI's pool or
 * PGlite): a fingerprint of the table that moves whenever a row is stored or changes state, and
 * the ids stored after a given one. Here, with the inbox's other SQL, so the console holds none.
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
