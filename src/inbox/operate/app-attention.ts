/**
 * What needs an operator in each app: its dead deliveries, the pending ones that already failed
 * (retrying), and everything still pending or running. Read through the state index: only rows in
 * those states are visited, however long the table's history.
 */
import { inboxError } from '../errors.js';
import type { Query } from '../queries/query.js';

export interface AppAttention {
  readonly dead: number;
  /** Pending again after a failed attempt. */
  readonly failing: number;
  /** Pending or running. */
  readonly pending: number;
}

export async function readAppAttention(query: Query, deliveriesTable: string, tableShown: string): Promise<Map<string, AppAttention>> {
  try {
    const rows = await query(
      `SELECT app, count(*) FILTER (WHERE state = 'dead')::int AS dead,
              count(*) FILTER (WHERE state = 'pending' AND last_error IS NOT NULL)::int AS failing,
              count(*) FILTER (WHERE state IN ('pending', 'running'))::int AS pending
         FROM ${deliveriesTable}
        WHERE state IN ('dead', 'pending', 'running') AND app IS NOT NULL
        GROUP BY app`,
    );
    return new Map(
      rows.map((row) => [
        String(row['app']),
        { dead: Number(row['dead']), failing: Number(row['failing']), pending: Number(row['pending']) },
      ]),
    );
  } catch (error) {
    throw inboxError(error, tableShown, 'counting what each app needs');
  }
}
