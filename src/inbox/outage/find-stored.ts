import type { DeliveryToStore } from '../../receiver/inbox-contract.js';
import type { Driver } from '../database/driver.js';
import { inboxError } from '../errors.js';
import type { TableNames } from '../schema/table-name.js';
import { keyColumn } from '../store-delivery.js';

/**
 * After an attempt whose answer was lost, the row holding these exact bytes at this `t` (its
 * replay key): this delivery's own row when that attempt committed. A row found pending had no
 * wake-up yet (its INSERT's answer never came back), so `afterFound` gives it one.
 */
export function createFindStored(driver: Driver, names: TableNames, afterFound: (pending: boolean) => void) {
  const sql = `SELECT id::text AS id, state FROM ${names.deliveries} WHERE replay_key = $1`;
  return async (delivery: DeliveryToStore): Promise<string | undefined> => {
    let rows;
    try {
      rows = await driver.query(sql, [keyColumn(delivery.replayKey)]);
    } catch (error) {
      throw inboxError(error, names.display, 'looking up a delivery whose store was cut');
    }
    const row = rows[0];
    if (row === undefined) return undefined;
    afterFound(row['state'] === 'pending');
    return String(row['id']);
  };
}
