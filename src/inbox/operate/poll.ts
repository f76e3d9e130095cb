/**
 * The two reads the console makes on its own, over one statement at a time (the CLI's pool or
 * PGlite): a fingerprint of the table that moves whenever a row is stored or changes state, and
 * the ids stored after a given one. Here, with the inbox's other SQL, so the console holds none.
 */
import { inboxError } from '../../database/errors.js';
import type { Query } from './query.js';

/**
 * Per state: how many rows, their attempts, the newest id. Any store, retry, replay or prune
 * changes it; it costs one index-only aggregate.
 */
export async function readChangeFingerprint(query: Query, table: string, tableShown: string): Promise<string> {
  let rows;
  try {
    rows = await query(
      `SELECT state, count(*)::int8::text AS n, coalesce(sum(attempts), 0)::int8::text AS a, coalesce(max(id), 0)::text AS m
         FROM ${table} GROUP BY state ORDER BY state`,
    );
  } catch (error) {
    throw inboxError(error, tableShown, 'watching for changes');
  }
  return rows.map((row) => `${String(row['state'])}:${String(row['n'])}:${String(row['a'])}:${String(row['m'])}`).join(' ');
}

/** Up to `limit` ids above `after`, in id order. */
export async function readIdsAfter(query: Query, table: string, tableShown: string, after: bigint, limit: number): Promise<bigint[]> {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a whole number from 1, got ${String(limit)}`);
  let rows;
  try {
    // ORDER BY the column, not the text alias: "99" sorts after "1000" as text.
    rows = await query(`SELECT id::text AS id FROM ${table} WHERE id > $1::bigint ORDER BY ${table}.id LIMIT $2::int`, [
      after.toString(),
      limit,
    ]);
  } catch (error) {
    throw inboxError(error, tableShown, 'reading new deliveries for the apps');
  }
  return rows.map((row) => BigInt(String(row['id'])));
}
