import { timestampNanos } from '../events/compare.js';
import type { DeliveryToStore } from '../receiver/inbox-contract.js';
import type { Driver } from './database/driver.js';
import { inboxError } from './errors.js';
import type { TableNames } from './schema/table-name.js';

const encoder = new TextEncoder();

export function storeDeliverySql(names: TableNames): string {
  return `INSERT INTO ${names.deliveries}
  (body, signature, signed_at, secret_index, action, event_time, event_ns, app, tick_id, replay_key, event_key, state, run_at,
   received_at)
VALUES ($1, $2, $3::bigint, $4, $5, $6, $7::bigint, $8, $9, $10, $11, $12, CASE WHEN $12 = 'pending' THEN now() END,
        COALESCE($13::timestamptz, now()))
ON CONFLICT DO NOTHING
RETURNING id::text AS id`;
}

const MAX_INT8 = 2n ** 63n - 1n;

/**
 * A text column cannot hold U+0000, which JSON can (`\u0000`). The body keeps the exact bytes;
 * the columns derived from it read U+FFFD there instead of refusing a verified delivery.
 */
function column(value: string): string {
  return value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? column(value) : null;
}

/** The unique key, escaped so that two different keys never become one (`\` doubled, U+0000 as `\0`). */
export function keyColumn(key: string): string {
  return key.includes('\u0000') || key.includes('\\') ? key.replaceAll('\\', '\\\\').replaceAll('\u0000', '\\0') : key;
}

/** Nanoseconds for ordering: the event's own time when int8 holds it (1677 to 2262), else the time received. */
function eventNanos(timestamp: unknown): bigint {
  const nanos = typeof timestamp === 'string' ? timestampNanos(timestamp) : undefined;
  return nanos !== undefined && nanos <= MAX_INT8 && nanos >= -MAX_INT8 - 1n ? nanos : BigInt(Date.now()) * 1_000_000n;
}

/** One INSERT that is the claim: a copy already stored conflicts on a unique key and inserts nothing. */
export function createStoreDelivery(driver: Driver, names: TableNames, afterInsert: (pending: boolean) => void) {
  const sql = storeDeliverySql(names);
  return async (delivery: DeliveryToStore): Promise<string | undefined> => {
    const { event } = delivery;
    const data = event.data as Record<string, unknown>;
    const nanos = eventNanos(event.timestamp);
    const app = event.action === 'app:create' ? (text(data['name']) ?? text(data['app'])) : text(data['app']);
    const state = delivery.ignored ? 'ignored' : 'pending';
    let rows;
    try {
      rows = await driver.query(sql, [
        typeof delivery.body === 'string' ? encoder.encode(delivery.body) : delivery.body,
        column(delivery.signature),
        String(delivery.signedAt),
        delivery.secretIndex,
        column(event.action),
        typeof event.timestamp === 'string' ? column(event.timestamp) : String(event.timestamp),
        nanos.toString(),
        app,
        text(data['tick_id']),
        keyColumn(delivery.replayKey),
        delivery.eventKey === undefined ? null : keyColumn(delivery.eventKey),
        state,
        delivery.receivedAt ?? null,
      ]);
    } catch (error) {
      throw inboxError(error, names.display, 'storing a delivery');
    }
    const id = rows[0]?.['id'];
    if (id === undefined) return undefined;
    afterInsert(state === 'pending');
    return String(id);
  };
}
