import { timestampNanos } from '../../events/compare.js';
import type { DeliveryToStore, StoredRow } from '../../receiver/inbox-contract.js';
import type { Driver } from '../../database/driver.js';
import { inboxError, MissingRowError } from '../../database/errors.js';
import { naturalKey } from '../../events/natural-key.js';
import type { TableNames } from '../schema/table-name.js';

const encoder = new TextEncoder();

const COLUMNS = 'body, signature, signed_at, secret_index, action, event_time, event_ns, app, tick_id, body_key';

export function storeDeliverySql(names: TableNames): string {
  // A row rebuilt by `inbox reconcile --record` with this event's natural key ($15) makes this
  // delivery its duplicate: the handlers ran (or will run) for the reconstruction.
  return `WITH reconciled AS (SELECT id FROM ${names.deliveries} WHERE natural_key = $15 AND origin = 'reconciled' LIMIT 1)
INSERT INTO ${names.deliveries} (${COLUMNS}, event_key, state, run_at, received_at, trace_context, natural_key, duplicate_of)
SELECT $1, $2, $3::bigint, $4, $5, $6, $7::bigint, $8, $9, $10,
       CASE WHEN r.id IS NULL THEN $11 END, CASE WHEN r.id IS NULL THEN $12 ELSE 'duplicate' END,
       CASE WHEN r.id IS NULL AND $12 = 'pending' THEN now() END,
       COALESCE($13::timestamptz, now()), CASE WHEN r.id IS NULL THEN $14 END, $15, r.id
  FROM (VALUES (1)) AS one LEFT JOIN reconciled AS r ON true
ON CONFLICT DO NOTHING
RETURNING id::text AS id, duplicate_of::text AS duplicate_of`;
}

/**
 * The first INSERT inserted nothing: either these bytes are stored (the body key), or the same
 * event is (the event key). In the second case the delivery is kept as a 'duplicate' row that
 * points at the first, with no event key of its own; a conflict on the body key here means a copy
 * of these very bytes won a race, and nothing is stored.
 */
export function storeDuplicateSql(names: TableNames): string {
  return `WITH original AS (SELECT id FROM ${names.deliveries} WHERE event_key = $11),
inserted AS (
  INSERT INTO ${names.deliveries} (${COLUMNS}, state, duplicate_of, received_at, natural_key)
  SELECT $1, $2, $3::bigint, $4, $5, $6, $7::bigint, $8, $9, $10, 'duplicate', original.id, COALESCE($12::timestamptz, now()), $13
    FROM original
  ON CONFLICT DO NOTHING
  RETURNING id, duplicate_of
)
SELECT (SELECT id::text FROM inserted) AS id, (SELECT duplicate_of::text FROM inserted) AS duplicate_of,
       EXISTS (SELECT 1 FROM original) AS original_found`;
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

const keyOrNull = (key: string | undefined) => (key === undefined ? null : keyColumn(key));

/** Nanoseconds for ordering: the event's own time when int8 holds it (1677 to 2262), else the time received. */
function eventNanos(timestamp: unknown): bigint {
  const nanos = typeof timestamp === 'string' ? timestampNanos(timestamp) : undefined;
  return nanos !== undefined && nanos <= MAX_INT8 && nanos >= -MAX_INT8 - 1n ? nanos : BigInt(Date.now()) * 1_000_000n;
}

/**
 * One INSERT that is the claim: a copy already stored conflicts on a unique key and inserts
 * nothing. Only when it conflicts does a second statement tell a byte copy from the same event.
 */
export function createStoreDelivery(
  driver: Driver,
  names: TableNames,
  afterInsert: (pending: boolean) => void,
  /** The receiving span's `traceparent` (src/telemetry), kept for the worker's `process` span to link to. */
  traceContext: () => string | undefined = () => undefined,
) {
  const sql = storeDeliverySql(names);
  const duplicateSql = storeDuplicateSql(names);
  return async (delivery: DeliveryToStore): Promise<StoredRow | undefined> => {
    const { event } = delivery;
    const data = event.data as Record<string, unknown>;
    const nanos = eventNanos(event.timestamp);
    const app = event.action === 'app:create' ? (text(data['name']) ?? text(data['app'])) : text(data['app']);
    const state = delivery.ignored ? 'ignored' : 'pending';
    const values = [
      typeof delivery.body === 'string' ? encoder.encode(delivery.body) : delivery.body,
      column(delivery.signature),
      String(delivery.signedAt),
      delivery.secretIndex,
      column(event.action),
      typeof event.timestamp === 'string' ? column(event.timestamp) : String(event.timestamp),
      nanos.toString(),
      app,
      text(data['tick_id']),
      keyColumn(delivery.bodyKey),
    ];
    const eventKey = delivery.eventKey === undefined ? null : keyColumn(delivery.eventKey);
    const receivedAt = delivery.receivedAt ?? null;
    const natural = keyOrNull(naturalKey(event.action, data));
    const trace = state === 'pending' ? (traceContext() ?? null) : null;
    try {
      // A second round only when the row it repeats was pruned between the two statements.
      for (let round = 0; round < 2; round++) {
        const row = (await driver.query(sql, [...values, eventKey, state, receivedAt, trace, natural]))[0];
        if (row !== undefined) {
          const duplicateOf = row['duplicate_of'];
          if (duplicateOf !== null && duplicateOf !== undefined) return { id: String(row['id']), duplicateOf: String(duplicateOf) };
          afterInsert(state === 'pending');
          return { id: String(row['id']) };
        }
        if (eventKey === null) return undefined;
        const duplicate = (await driver.query(duplicateSql, [...values, eventKey, receivedAt, natural]))[0];
        // Its SELECT has no FROM: one row, always. None is an answer that is not its own: tried again.
        if (duplicate === undefined) throw new MissingRowError('the duplicate statement of a delivery store');
        if (duplicate['id'] !== null && duplicate['id'] !== undefined) {
          return { id: String(duplicate['id']), duplicateOf: String(duplicate['duplicate_of']) };
        }
        // The original is there and these bytes are stored: a byte copy that lost the race.
        if (duplicate['original_found'] === true) return undefined;
      }
      return undefined;
    } catch (error) {
      throw inboxError(error, names.display, 'storing a delivery');
    }
  };
}

/**
 * After an attempt whose answer was lost, the row holding these exact bytes (its body key): this
 * delivery's own row when that attempt committed. A row found pending had no
 * wake-up yet (its INSERT's answer never came back), so `afterFound` gives it one.
 */
export function createFindStored(driver: Driver, names: TableNames, afterFound: (pending: boolean) => void) {
  const sql = `SELECT id::text AS id, state, duplicate_of::text AS duplicate_of FROM ${names.deliveries} WHERE body_key = $1`;
  return async (delivery: DeliveryToStore): Promise<StoredRow | undefined> => {
    let rows;
    try {
      rows = await driver.query(sql, [keyColumn(delivery.bodyKey)]);
    } catch (error) {
      throw inboxError(error, names.display, 'looking up a delivery whose store was cut');
    }
    const row = rows[0];
    if (row === undefined) return undefined;
    afterFound(row['state'] === 'pending');
    const duplicateOf = row['duplicate_of'];
    return { id: String(row['id']), ...(typeof duplicateOf === 'string' ? { duplicateOf } : {}) };
  };
}
