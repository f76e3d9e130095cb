import { systemClock, type Clock } from './clock.js';
import { driverFor } from '../database/detect.js';
import type { PGliteDirectory } from '../database/owner/open.js';
import { inboxError } from '../database/errors.js';
import { REFUSAL_FLUSH_MS, RefusalRecorder } from './health/refusals.js';
import type { Inbox } from './inbox.js';
import { createMonitor } from './monitor.js';
import { createOperator } from './operator.js';
import { migrate } from './schema/migrate.js';
import { resolveTableNames } from './schema/table-name.js';
import { receiverRuntime } from './store/connect-receiver.js';
import type { StoreRetryOptions } from './store/outage/options.js';
import { createStorePort } from './store/port.js';
import { registerRecordReconciled } from '../reconcile/recorders.js';
import { createRecordReconciled } from './record-reconciled.js';
import { Wake } from './wake.js';
import { startWorker } from './work/worker.js';
import { workerStarted } from '../telemetry/inbox-probes.js';
import { observeReceivers } from '../telemetry/receive.js';
import { wholeNumber } from './whole-number.js';

export type { Inbox } from './inbox.js';

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
  return composeInbox(options).inbox;
}

/**
 * An inbox's four ports, composed for {@link createInbox}: the store (what the receiver calls),
 * `work()` (the worker factory), the operator API and the monitor. The public `Inbox` is the four
 * on one object; the CLI and the console hold the operator and the monitor (src/inbox/facade/).
 *
 * @internal
 */
export function composeInbox<Database>(options: InboxOptions<Database>) {
  if (typeof options !== 'object' || options === null) throw new TypeError('createInbox expects { database, table? }');
  const driver = driverFor(options.database, options.preparedStatements ?? true);
  const names = resolveTableNames(options.table);
  const clock = options.clock ?? systemClock;
  const wake = new Wake(driver, names.channel, options.notify ?? true, clock);
  const telemetry = options.telemetry !== false;
  const flushMs = refusalFlushMs(options.recordRefusals);
  const refusals = flushMs === undefined ? undefined : new RefusalRecorder(driver, names, flushMs, clock);
  const store = createStorePort(driver, names, {
    storeRetry: options.storeRetry,
    telemetry,
    stored: (pending) => {
      if (pending) wake.stored();
    },
    refusals,
    clock,
  });
  const operator = createOperator(driver, names, () => wake.requeued());
  const monitor = createMonitor(driver, names, refusals, clock, () => inbox);
  const { list, get, retry, replay, stats, prune } = operator;
  const { health, readiness, workers, refusals: readRefusals, onRefusal, refusalTotals, watch } = monitor;
  const inbox: Inbox<TransactionOf<Database>> = {
    table: names.display,
    migrate: () => migrate(driver, names, clock),
    ...store,
    // A worker loop over this table for a receiver created with this inbox.
    work: (receiver, workOptions = {}) => {
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
        (wakeUp) => wake.subscribe(wakeUp, onListenError),
        () => wake.relisten(onListenError),
        clock,
        observed,
      );
      if (!observed) return worker;
      // The gauges (depth by state, oldest pending age, live workers) read this table while it has a worker here.
      const stopped = workerStarted(inbox, names.display, stats);
      return { ...worker, stop: (stopOptions) => worker.stop(stopOptions).finally(stopped) };
    },
    ...{ list, get, retry, replay, stats, prune },
    ...{ health, readiness, workers, refusals: readRefusals, onRefusal, refusalTotals, watch },
    close: async () => refusals?.close(),
  };
  registerRecordReconciled(
    inbox,
    createRecordReconciled(driver, names, () => wake.requeued()),
  );
  // Its receivers' spans and metrics: the OpenTelemetry code subscribes to what they publish.
  if (telemetry) observeReceivers();
  return { inbox, operator, monitor } as const;
}

/** How often refusals counted in memory are written; undefined with `recordRefusals: false`. */
function refusalFlushMs(option: InboxOptions<unknown>['recordRefusals']): number | undefined {
  if (option === false) return undefined;
  if (option !== undefined && option !== true && (typeof option !== 'object' || option === null))
    throw new TypeError('recordRefusals must be true, false or { flushIntervalMs }');
  const given = option === undefined || option === true ? undefined : option.flushIntervalMs;
  return wholeNumber('recordRefusals.flushIntervalMs', given, REFUSAL_FLUSH_MS, 1, 2 ** 31 - 1, ' of ms');
}
