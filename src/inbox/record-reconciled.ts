/**
 * Storing an event the rack proved it sent and the inbox never got (`reconcile(..., { record:
 * true })`, `inbox reconcile --record`): a row with `origin = 'reconciled'`, no signature, the
 * evidence beside it, `pending`, so that the app's workers run its handlers once, as for any
 * delivery. Its natural key (./natural-key.ts) makes it one row however often or from however many
 * processes it is recorded, and makes a late real arrival its duplicate (./store-delivery.ts).
 */
import { timestampNanos } from '../events/compare.js';
import type { Driver } from '../database/driver.js';
import { naturalKey } from '../events/natural-key.js';
import { failingAs } from './operate/query.js';
import type { TableNames } from './schema/table-name.js';
import { keyColumn } from './store/store-delivery.js';
import type { RecordReconciled } from '../reconcile/recorders.js';

const encoder = new TextEncoder();

/** The recorder of an inbox's table; `stored()` wakes the workers. */
export function createRecordReconciled(driver: Driver, names: TableNames, stored: () => Promise<void>): RecordReconciled {
  const d = names.deliveries;
  // No row, received or reconciled, with the key: a received one means the event arrived after all.
  const insert = `INSERT INTO ${d} (body, signature, signed_at, secret_index, action, event_time, event_ns, app, tick_id, body_key,
                  state, run_at, origin, evidence, natural_key)
SELECT $1, '', 0, -1, $2, $3, $4::bigint, $5, $6, $7, 'pending', now(), 'reconciled', $8::jsonb, $9
 WHERE NOT EXISTS (SELECT 1 FROM ${d} WHERE natural_key = $9)
ON CONFLICT DO NOTHING
RETURNING id::text AS id`;
  // A real delivery whose INSERT began before the reconciled row was committed did not see it: if
  // one is stored now, the reconciled row (still pending) becomes its duplicate, so one runs.
  const settle = `UPDATE ${d} SET state = 'duplicate',
       duplicate_of = (SELECT min(id) FROM ${d} WHERE natural_key = $2 AND origin = 'received')
 WHERE id = $1::bigint AND state = 'pending'
   AND EXISTS (SELECT 1 FROM ${d} WHERE natural_key = $2 AND origin = 'received')
RETURNING id`;
  const existing = `SELECT id::text AS id FROM ${d} WHERE natural_key = $1 AND origin = 'reconciled'`;
  return async (event, evidence) => {
    const key = naturalKey(event.action, event.data);
    if (key === undefined) throw new TypeError(`reconcile: ${event.action} has no natural key: it cannot be recorded`);
    const natural = keyColumn(key);
    const nanos = timestampNanos(event.timestamp);
    if (nanos === undefined) throw new TypeError(`reconcile: ${JSON.stringify(event.timestamp)} is not an RFC 3339 time`);
    const body = JSON.stringify({ action: event.action, status: event.status, timestamp: event.timestamp, data: event.data });
    return failingAs(names.display, 'recording a reconciled delivery', async () => {
      const inserted = await driver.query(insert, [
        encoder.encode(body),
        event.action,
        event.timestamp,
        nanos.toString(),
        event.data['app'] ?? null,
        event.data['tick_id'] ?? null,
        keyColumn(`reconciled:${key}`),
        JSON.stringify(evidence),
        natural,
      ]);
      const id = inserted[0]?.['id'];
      if (id !== undefined) {
        const settled = await driver.query(settle, [String(id), natural]);
        if (settled.length > 0) return { received: true };
        await stored();
        return { id: String(id), stored: true };
      }
      const found = (await driver.query(existing, [natural]))[0]?.['id'];
      return found === undefined ? { received: true } : { id: String(found), stored: false };
    });
  };
}
