import type { DeliveryToStore, StoredRow } from '../../../receiver/inbox-contract.js';
import type { Driver } from '../../../database/driver.js';
import { inboxError } from '../../../database/errors.js';
import type { TableNames } from '../../schema/table-name.js';
import { keyColumn } from '../store-delivery.js';

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
