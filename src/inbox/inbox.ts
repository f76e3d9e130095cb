/**
 * The `Inbox` users hold (rack-webhooks/inbox): its type alone, apart from createInbox, so that the
 * ports it is built from (store/port.ts, operator.ts, monitor.ts) take their members' types from it.
 */
import type { DeliveryInbox } from '../receiver/inbox-contract.js';
import type { Receiver } from '../receiver/types.js';
import type { HealthOptions, InboxHealth } from './health/health.js';
import type { InboxReadiness } from './health/readiness.js';
import type { RefusalCount, RefusalListener, RefusalMinute, RefusalQuery } from './health/refusals.js';
import type { WorkerInfo } from './health/workers.js';
import type { DeliveryFilter, InboxStats, ListOptions, ListPage, MigrateResult, StoredDeliveryDetail } from './types.js';
import type { WatchOptions, Watcher } from './watch/types.js';
import type { Worker } from './work/worker.js';
import type { WorkOptions } from './work/options.js';

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
