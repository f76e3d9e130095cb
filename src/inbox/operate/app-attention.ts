/**
 * What needs an operator in each app: its dead deliveries, the pending ones that already failed
 * (retrying), and everything still pending or running. Read through the queue's state index: only
 * rows in those states are visited, however long the table's history.
 */
import { failingAs, type Query } from './query.js';
import type { TableNames } from '../schema/table-name.js';

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
