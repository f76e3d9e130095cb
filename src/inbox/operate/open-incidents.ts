/**
 * The incidents inbox.watch() keeps open in `<table>_incidents` (any process's watcher opened
 * them), read without a running watcher: for `inbox.health()`, `inbox stats` and the console. A
 * schema from before the incidents table (version 6) has none to read.
 */
import type { Row } from '../../database/driver.js';
import { watchTables, type TableNames } from '../schema/table-name.js';
import type { Query } from './query.js';

/** The open incidents `where` picks, as `columns`, in `orderBy`'s order; `undefined` when the schema has no incidents table. */
export async function readOpenIncidents(
  query: Query,
  names: TableNames,
  columns: string,
  where: string,
  orderBy: string,
): Promise<Row[] | undefined> {
  const table = watchTables(names).incidents;
  const [exists] = await query('SELECT to_regclass($1) IS NOT NULL AS present', [table]);
  if (exists?.['present'] !== true) return undefined;
  return query(`SELECT ${columns} FROM ${table} WHERE resolved_at IS NULL AND ${where} ORDER BY ${orderBy}`);
}

/**
 * An incident's `fields`, stored as JSON text (a text column, not jsonb); `{}` when they are not a
 * JSON object (a hand edit, another writer): one such row must not stop health(), the alerts or
 * the scheduled reconcile, which read every open incident.
 */
export function incidentFields(row: Row): Record<string, unknown> {
  try {
    const fields: unknown = JSON.parse(String(row['fields']));
    return typeof fields === 'object' && fields !== null && !Array.isArray(fields) ? (fields as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
