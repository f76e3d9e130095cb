/**
 * The store port: what `createReceiver({ inbox })` calls (the `DeliveryInbox` of
 * src/receiver/inbox-contract.ts, which holds only its type). Everything on the path from a
 * verified delivery to its committed row lives in this folder: the receiver's store step
 * (persist.ts), the INSERT that is the claim (store-delivery.ts), and holding a delivery while the
 * database is away (outage/).
 */
import type { DeliveryInbox, DeliveryToStore, StoreDeliveryOptions } from '../../receiver/inbox-contract.js';
import { activeTraceparent } from '../../telemetry/trace-context.js';
import { connectReceiver } from './connect-receiver.js';
import type { Clock } from '../clock.js';
import type { Driver } from '../../database/driver.js';
import type { RefusalRecorder } from '../health/refusals.js';
import type { TableNames } from '../schema/table-name.js';
import { Circuit } from './outage/circuit.js';
import { resolveStoreRetry, type StoreRetryOptions } from './outage/options.js';
import { Outage } from './outage/outage.js';
import { storeWithRetry } from './outage/store-with-retry.js';
import { createFindStored, createStoreDelivery } from './store-delivery.js';

/** The receiver's side of an inbox: store a delivery, count a refusal, connect a receiver. */
export type StorePort = Required<Omit<DeliveryInbox, 'transactionType'>>;

export interface StorePortOptions {
  readonly storeRetry: StoreRetryOptions | false | undefined;
  /** False: no trace context is stored with a row, and receivers publish nothing for OpenTelemetry. */
  readonly telemetry: boolean;
  /** Called after each committed row; `pending` when a worker has it to run (the wake-up). */
  readonly stored: (pending: boolean) => void;
  /** Where refusals are counted; undefined with `recordRefusals: false`. */
  readonly refusals: RefusalRecorder | undefined;
  /** The outage's bounds, its probe timer and its durations. */
  readonly clock: Clock;
}

export function createStorePort(driver: Driver, names: TableNames, options: StorePortOptions): StorePort {
  const { refusals, telemetry, stored, clock } = options;
  const storeOnce = createStoreDelivery(driver, names, stored, telemetry ? activeTraceparent : undefined);
  const retry = resolveStoreRetry(options.storeRetry);
  const findStored = createFindStored(driver, names, stored);
  // No more store attempts at once than the pool has connections (pg's default of 10 when
  // unknown): the others wait their turn here, within their bounds, not in the pool's queue.
  const circuit = new Circuit(driver.maxConnections ?? 10, clock);
  const storeDelivery = storeWithRetry(storeOnce, findStored, retry, new Outage(retry, () => clock.now()), circuit, clock);
  return {
    storeDelivery: (delivery: DeliveryToStore, storeOptions?: StoreDeliveryOptions) =>
      storeDelivery(delivery, storeOptions).catch((error: unknown) => {
        // A verified delivery the database could not take is refused too, and lost: counted (and written once it is back).
        refusals?.count((error as { code?: string }).code ?? 'inbox_failed');
        throw error;
      }),
    countRefusal: (code) => refusals?.count(code),
    // The receiver's store step ships here, with the inbox, not in every receiver's bundle.
    connectReceiver: (connection) => ({ ...connectReceiver(connection), telemetry }),
  };
}
