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

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** One INSERT that is the claim: a copy already stored conflicts on a unique key and inserts nothing. */
export function createStoreDelivery(driver: Driver, names: TableNames, afterInsert: (pending: boolean) => void) {
  const sql = storeDeliverySql(names);
  return async (delivery: DeliveryToStore): Promise<string | undefined> => {
    const { event } = delivery;
    const data = event.data as Record<string, unknown>;
    const nanos = timestampNanos(event.timestamp) ?? BigInt(Date.now()) * 1_000_000n;
    const app = event.action === 'app:create' ? (text(data['name']) ?? text(data['app'])) : text(data['app']);
    const state = delivery.ignored ? 'ignored' : 'pending';
    let rows;
    try {
      rows = await driver.query(sql, [
        typeof delivery.body === 'string' ? encoder.encode(delivery.body) : delivery.body,
        delivery.signature,
        String(delivery.signedAt),
        delivery.secretIndex,
        event.action,
        event.timestamp,
        nanos.toString(),
        app,
        text(data['tick_id']),
        delivery.replayKey,
        delivery.eventKey ?? null,
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
