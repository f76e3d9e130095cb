import type { DeliveryInbox, DeliveryToStore, StoreDeliveryOptions } from '../receiver/inbox-contract.js';
import type { Receiver } from '../receiver/types.js';
import { systemClock, type Clock } from './clock.js';
import { connectReceiver, receiverRuntime } from './connect-receiver.js';
import { driverFor } from './database/detect.js';
import { inboxError } from './errors.js';
import { checkHealth, checkReadiness, type HealthOptions, type InboxHealth, type InboxReadiness } from './health/health.js';
import {
  readRefusals,
  REFUSAL_FLUSH_MS,
  RefusalRecorder,
  type RefusalCount,
  type RefusalListener,
  type RefusalMinute,
  type RefusalQuery,
} from './health/refusals.js';
import { listWorkers, type WorkerInfo } from './health/workers.js';
import { replayDeliveries, retryDeliveries, pruneDeliveries } from './operate/change.js';
import { deliveryStats, getDelivery, listDeliveries } from './queries/read.js';
import { Circuit } from './outage/circuit.js';
import { createFindStored } from './outage/find-stored.js';
import { resolveStoreRetry, type StoreRetryOptions } from './outage/options.js';
import { Outage } from './outage/outage.js';
import { storeWithRetry } from './outage/store-with-retry.js';
import { migrate } from './schema/migrate.js';
import { resolveTableNames, type TableNames } from './schema/table-name.js';
import type { Driver } from './database/driver.js';
import type { PGliteDirectory } from './database/owner/open.js';
import { createStoreDelivery } from './store-delivery.js';
import type { DeliveryFilter, InboxStats, ListOptions, ListPage, MigrateResult, StoredDeliveryDetail } from './types.js';
import { startWatcher } from './watch/watcher.js';
import type { WatchOptions, Watcher } from './watch/types.js';
import { Wake } from './wake.js';
import { startWorker, type Worker, type WorkOptions } from './work/worker.js';
import { workerStarted } from '../telemetry/inbox-probes.js';
import { observeReceivers } from '../telemetry/receive.js';
import { activeTraceparent } from '../telemetry/trace-context.js';

/** `context.transaction` with openPGlite(dir): what the owner's PGlite Transaction and a guest's pg PoolClient share. */
export interface DirectoryTransaction {
  /** One statement with `$1`-style parameters, inside the delivery's transaction. */
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<DirectoryQueryResult<R>>;
}

/** What {@link DirectoryTransaction.query} resolves with. */
export interface DirectoryQueryResult<R> {
  /** The statement's rows. */
  rows: R[];
}

/**
 * Options of {@link createInbox}.
 *
 * @typeParam Database - The client's own type, from which handlers' `context.transaction` is typed.
 */
export interface InboxOptions<Database> {
  /**
   * A pg Pool or Client, a postgres.js `sql`, or PGlite: `await openPGlite(dir)` for a directory
   * (a PGlite instance on a directory is deprecated: it opens the files before their owner is known).
   */
  database: Database;
  /**
   * The table; may be schema-qualified (`ops.deliveries`), else it is found on the search_path.
   * Everything the schema creates is named after it.
   *
   * @defaultValue `'rack_webhooks_inbox'` ({@link DEFAULT_TABLE})
   */
  table?: string;
  /**
   * NOTIFY other processes' workers when a delivery is stored (coalesced to one per 10 ms);
   * `false` relies on polling alone.
   *
   * @defaultValue `true`
   */
  notify?: boolean;
  /**
   * Send the inbox's statements as prepared (named) statements: parsed and planned once per
   * connection. Pass `false` behind PgBouncer in transaction mode older than 1.21.
   *
   * @defaultValue `true`
   */
  preparedStatements?: boolean;
  /**
   * While the database is away for a reason that can pass (a restart, a cut connection, a
   * failover, a statement timeout), `receive()` keeps the verified delivery and tries again within
   * the request, with backoff, up to these bounds, counted from its arrival; only past them does it
   * answer 503. `false` answers 503 at once. Refusals for good (a missing table, a refused
   * statement) are never retried.
   *
   * @defaultValue `{ maxWaitMs: 20000, maxBufferedBytes: 67108864 }`
   */
  storeRetry?: StoreRetryOptions | false;
  /**
   * Count the receiver's refusals (bad signatures, unparsable bodies, too large, ...) per minute
   * and code in `<table>_refusals`: aggregated in memory and written in one upsert every
   * `flushIntervalMs` (and on `close()`), so that a flood of forged requests costs one small
   * write every few seconds. Only the code is kept, never a body or a header.
   *
   * @defaultValue `{ flushIntervalMs: 5000 }`
   */
  recordRefusals?:
    | boolean
    | {
        /** How often the counts kept in memory are written, in ms. */
        flushIntervalMs?: number;
      };
  /**
   * OpenTelemetry spans and metrics as soon as the application registers an SDK
   * (`@opentelemetry/api` 1.x, an optional peer): received deliveries, handler attempts linked to
   * them (the receiving span's context is stored with the row), durations, depth by state, oldest
   * pending age, live workers. `false` turns off all of it for this inbox, its receivers and workers.
   *
   * @defaultValue `true`
   */
  telemetry?: boolean;
  /**
   * The clock every part of the inbox measures time and sets timers on (store retries, the
   * outage's circuit, refusals, watch, NOTIFY, workers): for tests only, not a public option.
   *
   * @internal
   * @defaultValue the system clock
   */
  clock?: Clock;
}

/** The client handlers get as `context.transaction`: the same kind as the database. */
export type TransactionOf<Database> = Database extends PGliteDirectory
  ? DirectoryTransaction // openPGlite(dir): the owner's PGlite Transaction or a guest's pg PoolClient
  : Database extends {
        /** postgres.js: `sql.begin(options, fn)`. */
        begin(options: string, fn: (tx: infer T) => unknown): unknown;
      }
    ? T // postgres.js: a TransactionSql
    : Database extends {
          /** PGlite: `db.transaction(fn)`. */
          transaction(fn: (tx: infer T) => Promise<unknown>): Promise<unknown>;
        }
      ? T // PGlite: a Transaction
      : Database extends {
            /** pg Pool: its count of clients. */
            totalCount: number;
            /** pg Pool: `pool.connect(callback)`. */
            connect(callback: (error: never, client: infer Client, done: never) => void): void;
          }
        ? NonNullable<Client> // pg Pool: the PoolClient holding the transaction (read off connect's last overload)
        : Database; // pg Client: the client itself

/**
 * The inbox {@link createInbox} returns: pass it to `createReceiver({ inbox })`, run workers with
 * `work(receiver)`, and operate it (`list`, `get`, `retry`, `replay`, `stats`, `prune`).
 *
 * @typeParam Tx - The transaction client handlers receive as `context.transaction`.
 */
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
  /**
   * Dead deliveries back to pending, due now, with a fresh budget of attempts; `duplicate` ones too
   * when named by id or by `state: 'duplicate'`. Resolves with the count.
   */
  retry(idOrFilter: string | DeliveryFilter): Promise<number>;
  /** Done deliveries back to pending, to run the handlers again in event-time order. Resolves with the count. */
  replay(filter: DeliveryFilter): Promise<number>;
  /** How many deliveries are in each state, and how long the oldest pending one has waited. */
  stats(): Promise<InboxStats>;
  /** Deletes done, dead, ignored and duplicate deliveries received before `before`; never pending or running ones. */
  prune(options: { before: Date }): Promise<number>;
  /**
   * Database reachable, schema current, live workers, oldest pending age, dead count and refusals
   * in the last hour, with a verdict (`ok`, `warning`, `unhealthy`, `unreachable`) and its reasons.
   * Never rejects for the database being away: that is `status: 'unreachable'`.
   */
  health(options?: HealthOptions): Promise<InboxHealth>;
  /** One cheap statement: the database answers and the schema is this package's (a readiness probe). */
  readiness(): Promise<InboxReadiness>;
  /** Workers with a heartbeat row, live ones first; `live: false` for one that stopped beating without `stop()`. */
  workers(): Promise<WorkerInfo[]>;
  /** Refusals recorded by every process since `since` (default: an hour ago), per code, most frequent first. */
  refusals(query?: RefusalQuery & { perMinute?: false }): Promise<RefusalCount[]>;
  /** The same per minute and code, oldest first. */
  refusals(query: RefusalQuery & { perMinute: true }): Promise<RefusalMinute[]>;
  /**
   * Calls `listener(code)` for each delivery this process refuses (e.g. to add to an OpenTelemetry
   * counter). Returns what unsubscribes.
   */
  onRefusal(listener: RefusalListener): () => void;
  /** Refusals this process counted since it started, per code: monotonic, for an observable counter. */
  refusalTotals(): ReadonlyMap<string, number>;
  /** Writes the refusals counted in memory and stops their timer; the database client stays yours to end. */
  close(): Promise<void>;
  /**
   * Starts the operations loop: alerts (`onAlert` once when an incident opens, once when it
   * resolves) and retention (old rows pruned by state, in bounded batches). Run it on as many
   * processes as you like: one at a time holds the lease and does the work.
   */
  watch(options?: WatchOptions): Watcher;
}

/**
 * The durable log and work queue of deliveries, on PostgreSQL (a `pg` Pool or Client, postgres.js)
 * or PGlite: the receiver commits one row per verified delivery before it answers, and workers run
 * the handlers from there, with retries, on any number of processes. Duplicates are caught by two
 * unique columns, so the insert is the claim.
 *
 * @param options - The database client (an optional peer: none is a dependency), the table, NOTIFY.
 * @returns The inbox; run `await inbox.migrate()` once at start-up.
 * @throws `TypeError` for a `database` that is none of the supported clients, a pg Pool without
 *   `connectionTimeoutMillis` (its connects could wait forever), or an invalid table name.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { createReceiver } from 'rack-webhooks';
 * import { createInbox } from 'rack-webhooks/inbox';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 5000 });
 * const inbox = createInbox({ database: pool });
 * await inbox.migrate();
 *
 * const receiver = createReceiver({ secrets: process.env.RACK_WEBHOOK_SECRETS!, inbox });
 * receiver.on('app:budget:auto-shutdown:fired', async (event, { delivery, transaction }) => {
 *   // Commits if and only if the delivery is marked done.
 *   await transaction.query('INSERT INTO pages (delivery_id, app) VALUES ($1, $2)', [delivery.id, event.data.app]);
 * });
 * const worker = inbox.work(receiver, { concurrency: 4 });
 * ```
 */
export function createInbox<Database>(options: InboxOptions<Database>): Inbox<TransactionOf<Database>> {
  if (typeof options !== 'object' || options === null) throw new TypeError('createInbox expects { database, table? }');
  const driver = driverFor(options.database, options.preparedStatements ?? true);
  const names = resolveTableNames(options.table);
  const clock = options.clock ?? systemClock;
  const wake = new Wake(driver, names.channel, options.notify ?? true, clock);
  const telemetry = options.telemetry !== false;
  const storeOnce = createStoreDelivery(
    driver,
    names,
    (pending) => {
      if (pending) wake.stored();
    },
    telemetry ? activeTraceparent : undefined,
  );
  const retry = resolveStoreRetry(options.storeRetry);
  const findStored = createFindStored(driver, names, (pending) => {
    if (pending) wake.stored();
  });
  // No more store attempts at once than the pool has connections (pg's default of 10 when
  // unknown): the others wait their turn here, within their bounds, not in the pool's queue.
  const circuit = new Circuit(driver.maxConnections ?? 10, clock);
  const storeDelivery = storeWithRetry(storeOnce, findStored, retry, new Outage(retry, () => clock.now()), circuit, clock);
  const refusals = refusalRecorder(driver, names, options.recordRefusals, clock);

  const inbox: Inbox<TransactionOf<Database>> = {
    table: names.display,
    migrate: () => migrate(driver, names),
    storeDelivery: (delivery: DeliveryToStore, storeOptions?: StoreDeliveryOptions) =>
      storeDelivery(delivery, storeOptions).catch((error: unknown) => {
        // A verified delivery the database could not take is refused too, and lost: counted (and written once it is back).
        refusals?.count((error as { code?: string }).code ?? 'inbox_failed');
        throw error;
      }),
    work(receiver, workOptions = {}) {
      const runtime = receiverRuntime(receiver);
      if (runtime === undefined) throw new TypeError('inbox.work expects a receiver from createReceiver({ inbox })');
      const onListenError = (error: unknown) => {
        const wrapped = inboxError(error, names.display, 'listening for new deliveries');
        runtime.log({
          level: 'warn',
          event: 'inbox_unavailable',
          message: `LISTEN failed (${wrapped.message}); polling until it works again`,
          code: wrapped.code,
        });
      };
      const observed = telemetry && runtime.telemetry !== false && workOptions.telemetry !== false;
      const worker = startWorker(
        driver,
        names,
        runtime,
        workOptions,
        (wakeUp) => {
          const unsubscribe = wake.subscribe(wakeUp, onListenError);
          return unsubscribe;
        },
        () => wake.relisten(onListenError),
        clock,
        observed,
      );
      if (!observed) return worker;
      // The gauges (depth by state, oldest pending age, live workers) read this table while it has a worker here.
      const stopped = workerStarted(inbox, names.display, () => deliveryStats(driver, names));
      return { ...worker, stop: (stopOptions) => worker.stop(stopOptions).finally(stopped) };
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
    watch: (watchOptions) => startWatcher(driver, names, watchOptions, clock),
    prune: (pruneOptions) => pruneDeliveries(driver, names, { before: (pruneOptions as { before: Date } | undefined)?.before as Date }),
    health: (healthOptions) => checkHealth(driver, names, healthOptions ?? {}, clock),
    readiness: () => checkReadiness(driver, names),
    workers: () => listWorkers(driver, names),
    refusals: ((query?: RefusalQuery) => readRefusals(driver, names, query, clock)) as Inbox['refusals'],
    onRefusal: (listener) => refusals?.subscribe(listener) ?? (() => {}),
    refusalTotals: () => refusals?.totals() ?? new Map(),
    countRefusal: (code) => refusals?.count(code),
    // The receiver's store step ships here, with the inbox, not in every receiver's bundle.
    connectReceiver: (connection) => ({ ...connectReceiver(connection), telemetry }),
    close: async () => refusals?.close(),
  };
  // Its receivers' spans and metrics: the OpenTelemetry code subscribes to what they publish.
  if (telemetry) observeReceivers();
  return inbox;
}

function refusalRecorder(
  driver: Driver,
  names: TableNames,
  option: InboxOptions<unknown>['recordRefusals'],
  clock: Clock,
): RefusalRecorder | undefined {
  if (option === false) return undefined;
  if (option !== undefined && option !== true && (typeof option !== 'object' || option === null))
    throw new TypeError('recordRefusals must be true, false or { flushIntervalMs }');
  const flushMs = option === undefined || option === true ? REFUSAL_FLUSH_MS : (option.flushIntervalMs ?? REFUSAL_FLUSH_MS);
  if (!Number.isSafeInteger(flushMs) || flushMs < 1 || flushMs > 2 ** 31 - 1)
    throw new RangeError(`recordRefusals.flushIntervalMs must be a whole number of ms from 1 to ${2 ** 31 - 1}, got ${String(flushMs)}`);
  return new RefusalRecorder(driver, names, flushMs, clock);
}
