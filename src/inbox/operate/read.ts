/**
 * The reads of deliveries that several parts of the inbox make: list, get and stats for
 * createInbox, the counts of the health check, the lifecycle deliveries of the watcher's
 * overdue_lifecycle rule. operate/ is the floor below health/ and watch/: both read through it, it
 * imports neither.
 */
import { parseEvent } from '../../events/parse-event.js';
import type { AnyWebhookEvent } from '../../events/types.js';
import type { Driver } from '../../database/driver.js';
import { DELIVERY_COLUMNS, toAttempt, toBytes, toStoredDelivery } from '../rows.js';
import type { TableNames } from '../schema/table-name.js';
import type { InboxStats, ListOptions, ListPage, StoredDeliveryDetail } from '../types.js';
import { buildWhere, isStorableId, MAX_INT8, toId } from './filter.js';
import { failingAs } from './query.js';

const DEFAULT_LIMIT = 100;

/** It parsed when it was accepted; undefined if a stricter version refuses it now. */
function parseStored(body: Uint8Array): AnyWebhookEvent | undefined {
  try {
    return parseEvent(body);
  } catch {
    return undefined;
  }
}
const MAX_LIMIT = 1000;

/** The cursor is the last row's sort key: `<event_ns>.<id>`, opaque to callers. */
function decodeCursor(after: string): [string, string] {
  const match = typeof after === 'string' ? /^(-?\d{1,20})\.([1-9]\d{0,18})$/.exec(after) : null;
  if (match === null || BigInt(match[1]!) > MAX_INT8 || BigInt(match[1]!) < -MAX_INT8 - 1n || BigInt(match[2]!) > MAX_INT8) {
    throw new TypeError(`after must be the \`next\` cursor of a previous page, got ${JSON.stringify(after)}`);
  }
  return [match[1]!, match[2]!];
}

export async function listDeliveries(driver: Driver, names: TableNames, options: ListOptions = {}): Promise<ListPage> {
  const limit = options.limit ?? DEFAULT_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new RangeError(`limit must be a whole number from 1 to ${MAX_LIMIT}, got ${String(limit)}`);
  const order = options.order ?? 'asc';
  if (order !== 'asc' && order !== 'desc') throw new RangeError(`order must be 'asc' or 'desc', got ${JSON.stringify(order)}`);
  const where = buildWhere(options, 1, names.queue);
  const withEvents = options.includeEvents === true;
  let sql = `SELECT ${DELIVERY_COLUMNS}${withEvents ? ', body' : ''} FROM ${names.deliveries} WHERE ${where.sql}`;
  const params = [...where.params];
  if (options.after !== undefined) {
    const [nanos, id] = decodeCursor(options.after);
    params.push(nanos, id);
    sql += ` AND (event_ns, id) ${order === 'asc' ? '>' : '<'} ($${params.length - 1}::bigint, $${params.length}::bigint)`;
  }
  // Arrival breaks ties between events of the same nanosecond: ids grow with arrival. Qualified,
  // because a bare name in ORDER BY means the output column: `id::text AS id` sorts "99" after "148".
  // The limit is bound, never written in: each distinct limit would be a new named statement, never freed.
  params.push(limit + 1);
  sql += ` ORDER BY ${names.deliveries}.event_ns ${order}, ${names.deliveries}.id ${order} LIMIT $${params.length}::int`;
  const rows = await failingAs(names.display, 'listing deliveries', () => driver.query(sql, params));
  const deliveries = rows
    .slice(0, limit)
    .map((row) => (withEvents ? { ...toStoredDelivery(row), event: parseStored(toBytes(row['body'])) } : toStoredDelivery(row)));
  const last = deliveries[deliveries.length - 1];
  return { deliveries, next: rows.length > limit && last !== undefined ? `${last.eventNanos}.${last.id}` : undefined };
}

export async function getDelivery(driver: Driver, names: TableNames, id: string): Promise<StoredDeliveryDetail | undefined> {
  const key = toId(id);
  if (!isStorableId(key)) return undefined;
  const read = (sql: string) => failingAs(names.display, 'reading a delivery', () => driver.query(sql, [key]));
  const [row] = await read(`SELECT ${DELIVERY_COLUMNS}, body, signature FROM ${names.deliveries} WHERE id = $1::bigint`);
  if (row === undefined) return undefined;
  const attempts = await read(`SELECT * FROM ${names.attempts} WHERE delivery_id = $1::bigint ORDER BY attempt`);
  const body = toBytes(row['body']);
  return {
    ...toStoredDelivery(row),
    body,
    signature: String(row['signature']),
    event: parseStored(body),
    attemptLog: attempts.map(toAttempt),
  };
}

export async function deliveryStats(driver: Driver, names: TableNames): Promise<InboxStats> {
  const rows = await failingAs(names.display, 'counting deliveries', () =>
    driver.query(
      `SELECT state, count(*)::int AS n,
              (extract(epoch FROM now() - min(received_at) FILTER (WHERE state = 'pending')) * 1000)::float8 AS oldest
         FROM ${names.deliveries} GROUP BY state`,
    ),
  );
  const counts = { pending: 0, running: 0, done: 0, dead: 0, ignored: 0, duplicate: 0 };
  let oldest: number | null = null;
  for (const row of rows) {
    counts[row['state'] as keyof typeof counts] = Number(row['n']);
    if (row['oldest'] !== null && row['oldest'] !== undefined) oldest = Math.max(0, Math.round(Number(row['oldest'])));
  }
  const total = counts.pending + counts.running + counts.done + counts.dead + counts.ignored + counts.duplicate;
  return { ...counts, total, oldestPendingAgeMs: oldest };
}
