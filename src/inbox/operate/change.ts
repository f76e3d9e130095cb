import type { Driver } from '../../database/driver.js';
import type { TableNames } from '../schema/table-name.js';
import type { DeliveryFilter } from '../types.js';
import { asList, buildWhere, toId } from './filter.js';
import { failingAs } from './query.js';

/**
 * Moves deliveries in one of the states `from` back to pending, due now, with a fresh budget of
 * attempts. Resolves with how many moved.
 */
async function requeue(
  driver: Driver,
  names: TableNames,
  filter: DeliveryFilter,
  from: readonly ('dead' | 'done' | 'duplicate')[],
  doing: string,
): Promise<number> {
  // Every field of the filter narrows, `state` too: replay({ state: 'dead' }) matches no done row.
  // No queue for the filter's own state: `from` below asks the queue already when it can.
  const where = buildWhere(filter, from.length + 1);
  // replayed_at marks the next run as a replay; a retry is not one.
  const replayed = from.includes('done') ? 'now()' : 'NULL';
  const states = from.map((_, index) => `$${index + 1}`).join(', ');
  const rows = await failingAs(names.display, doing, () =>
    driver.query(
      `WITH moved AS (
         UPDATE ${names.deliveries}
            SET state = 'pending', run_at = now(), attempt_base = attempts, last_error = NULL, done_at = NULL, replayed_at = ${replayed}
          WHERE state IN (${states}) AND ${where.sql}${
            // Dead and duplicate rows are in the queue's state index; done ones only in the log.
            from.includes('done') ? '' : ` AND id IN (SELECT id FROM ${names.queue} WHERE state IN (${states}))`
          }
         RETURNING 1
       )
       SELECT count(*)::int AS n FROM moved`,
      [...from, ...where.params],
    ),
  );
  return Number(rows[0]?.['n'] ?? 0);
}

/**
 * Dead deliveries go back to pending; so do `duplicate` ones, but only when asked for by id or by
 * `state: 'duplicate'`: "retry everything" must not run every repeated event a second time.
 */
export function retryDeliveries(driver: Driver, names: TableNames, idOrFilter: string | DeliveryFilter): Promise<number> {
  const filter = typeof idOrFilter === 'string' || typeof idOrFilter === 'number' ? { ids: [toId(idOrFilter)] } : idOrFilter;
  // `?.`: not checked yet, buildWhere refuses what is not an object.
  const namesDuplicates = filter?.ids !== undefined || asList(filter?.state ?? []).includes('duplicate');
  return requeue(driver, names, filter, namesDuplicates ? ['dead', 'duplicate'] : ['dead'], 'retrying deliveries');
}

export function replayDeliveries(driver: Driver, names: TableNames, filter: DeliveryFilter): Promise<number> {
  if (typeof filter !== 'object' || filter === null)
    throw new TypeError('replay takes a filter such as { action: "app:budget:*" } ({} replays every done delivery)');
  return requeue(driver, names, filter, ['done'], 'replaying deliveries');
}

const PRUNABLE = ['done', 'dead', 'ignored', 'duplicate'] as const;

/**
 * Deletes deliveries received before `before` in `states` (never a running one). With `limit`, at
 * most that many, oldest first, skipping rows another transaction holds: retention's bounded batch.
 */
export async function pruneDeliveries(
  driver: Driver,
  names: TableNames,
  options: { before: Date; states?: readonly string[]; limit?: number },
): Promise<number> {
  const before = options?.before;
  if (!(before instanceof Date) || Number.isNaN(before.getTime())) throw new TypeError('prune takes { before: Date }');
  const states = options.states ?? PRUNABLE;
  const list = states.map((_, index) => `$${index + 2}`).join(', ');
  const limit = options.limit;
  const where = `received_at < $1 AND state IN (${list})`;
  const target =
    limit === undefined
      ? where
      : `id IN (SELECT id FROM ${names.deliveries} WHERE ${where} ORDER BY received_at LIMIT $${states.length + 2}::int FOR UPDATE SKIP LOCKED)`;
  const rows = await failingAs(names.display, 'pruning deliveries', () =>
    driver.query(
      `WITH pruned AS (
         DELETE FROM ${names.deliveries} WHERE ${target} RETURNING 1
       )
       SELECT count(*)::int AS n FROM pruned`,
      limit === undefined ? [before, ...states] : [before, ...states, Math.floor(limit)],
    ),
  );
  return Number(rows[0]?.['n'] ?? 0);
}
