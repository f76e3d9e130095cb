import type { DeliveryInbox, DeliveryToStore } from '../receiver/inbox-contract.js';
import { receiverRuntime } from '../receiver/inbox-contract.js';
import type { Receiver } from '../receiver/types.js';
import { driverFor } from './database/detect.js';
import { inboxError } from './errors.js';
import { replayDeliveries, retryDeliveries, pruneDeliveries } from './operate/change.js';
import { deliveryStats, getDelivery, listDeliveries } from './operate/read.js';
import { migrate } from './schema/migrate.js';
import { resolveTableNames } from './schema/table-name.js';
import { createStoreDelivery } from './store-delivery.js';
import type { DeliveryFilter, InboxStats, ListOptions, ListPage, MigrateResult, StoredDeliveryDetail } from './types.js';
import { Wake } from './work/wake.js';
import { startWorker, type Worker, type WorkOptions } from './work/worker.js';

export interface InboxOptions<Database> {
  /** A pg Pool or Client, a postgres.js `sql`, or a PGlite instance. */
  database: Database;
  /** Default `rack_webhooks_inbox`; may be schema-qualified (`ops.deliveries`), else search_path. */
  table?: string;
  /** NOTIFY other processes' workers when a delivery is stored. Default true. */
  notify?: boolean;
  /**
   * Send the inbox's statements as prepared (named) statements: parsed and planned once per
   * connection. Default true; pass false behind PgBouncer in transaction mode older than 1.21.
   */
  preparedStatements?: boolean;
}

/** The client handlers get as `context.transaction`: the same kind as the database. */
export type TransactionOf<Database> = Database extends { begin(options: string, fn: (tx: infer T) => unknown): unknown }
  ? T // postgres.js: a TransactionSql
  : Database extends { transaction(fn: (tx: infer T) => Promise<unknown>): Promise<unknown> }
    ? T // PGlite: a Transaction
    : Database extends { totalCount: number; connect(callback: (error: never, client: infer Client, done: never) => void): void }
      ? NonNullable<Client> // pg Pool: the PoolClient holding the transaction (read off connect's last overload)
      : Database; // pg Client: the client itself

export interface Inbox<Tx = unknown> extends DeliveryInbox<Tx> {
  /** The table as configured. */
  readonly table: string;
  /** Creates or updates the schema; idempotent and safe from several processes at once. */
  migrate(): Promise<MigrateResult>;
  /** Runs the receiver's handlers for stored deliveries until `stop()`. */
  work(receiver: Receiver<Tx>, options?: WorkOptions): Worker;
  /** Oldest event first (nanoseconds, then arrival); `order: 'desc'` for newest first; paged with `after`. */
  list(options?: ListOptions): Promise<ListPage>;
  /** One delivery with its raw body and attempts; `undefined` when there is none with that id. */
  get(id: string): Promise<StoredDeliveryDetail | undefined>;
  /** Dead deliveries back to pending, due now, with a fresh budget of attempts. Resolves with the count. */
  retry(idOrFilter: string | DeliveryFilter): Promise<number>;
  /** Done deliveries back to pending, to run the handlers again in event-time order. Resolves with the count. */
  replay(filter: DeliveryFilter): Promise<number>;
  stats(): Promise<InboxStats>;
  /** Deletes done, dead and ignored deliveries received before `before`; never pending or running ones. */
  prune(options: { before: Date }): Promise<number>;
}

export function createInbox<Database>(options: InboxOptions<Database>): Inbox<TransactionOf<Database>> {
  if (typeof options !== 'object' || options === null) throw new TypeError('createInbox expects { database, table? }');
  const driver = driverFor(options.database, options.preparedStatements ?? true);
  const names = resolveTableNames(options.table);
  const wake = new Wake(driver, names.channel, options.notify ?? true);
  const storeDelivery = createStoreDelivery(driver, names, (pending) => {
    if (pending) wake.stored();
  });

  return {
    table: names.display,
    migrate: () => migrate(driver, names),
    storeDelivery: (delivery: DeliveryToStore) => storeDelivery(delivery),
    work(receiver, workOptions = {}) {
      const runtime = typeof receiver === 'object' && receiver !== null ? receiverRuntime(receiver) : undefined;
      if (runtime === undefined) throw new TypeError('inbox.work expects a receiver from createReceiver()');
      const onListenError = (error: unknown) => {
        const wrapped = inboxError(error, names.display, 'listening for new deliveries');
        runtime.log({ level: 'warn', event: 'inbox_unavailable', message: `LISTEN failed (${wrapped.message}); polling until it works again`, code: wrapped.code });
      };
      return startWorker(driver, names, runtime, workOptions, (wakeUp) => {
        const unsubscribe = wake.subscribe(wakeUp, onListenError);
        return unsubscribe;
      }, () => wake.relisten(onListenError));
    },
    list: (listOptions) => listDeliveries(driver, names, listOptions),
    get: (id) => getDelivery(driver, names, id),
    async retry(idOrFilter) {
      const count = await retryDeliveries(driver, names, idOrFilter);
      if (count > 0) await wake.requeued();
      return count;
    },
    async replay(filter) {
      const count = await replayDeliveries(driver, names, filter);
      if (count > 0) await wake.requeued();
      return count;
    },
    stats: () => deliveryStats(driver, names),
    prune: (pruneOptions) => pruneDeliveries(driver, names, pruneOptions),
  };
}
