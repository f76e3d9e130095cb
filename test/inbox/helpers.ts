import type { Transaction } from '@electric-sql/pglite';
import type { PoolClient } from 'pg';
import type postgres from 'postgres';
import { onTestFinished } from 'vitest';
import { createReceiver, type Receiver, type ReceiveResult, type ReceiverOptions } from '../../src/index.js';
import { createInbox, type Inbox, type Worker, type WorkOptions } from '../../src/inbox.js';
import { createSignedRequestSync, type SignedRequest } from '../../src/testing/index.js';
import { deferred, sleep, waitFor } from '../kit/time.js';
import { openDatabase, type ClientKind, type TestDatabase } from './databases.js';

export { sleep };

/**
 * What every inbox suite stands on: an inbox over a fresh table of one client kind, receivers and
 * workers that are stopped and closed when the test finishes, and signed deliveries.
 */

/** The receiver's secrets: a rotated-out key first, so a delivery signed with SECRET matches index 1. */
export const OLD_SECRET = 'inbox-suite-old-secret';
export const SECRET = 'inbox-suite-current-secret';
export const SECRETS = [OLD_SECRET, SECRET];

/** health()'s checks when the database cannot be reached: it fails, and nothing behind it is known. */
export const UNREACHABLE_CHECKS = {
  database: 'failing',
  schema: 'unknown',
  workers: 'unknown',
  backlog: 'unknown',
  dead: 'unknown',
  refusals: 'unknown',
  gaps: 'unknown',
} as const;

/** Fast worker defaults: the suites must stay well under a second per test. */
export const FAST: WorkOptions = { pollIntervalMs: 20, backoff: { baseMs: 10, jitter: 'none' } };

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export function sign(eventOrBody: object | string, options: { t?: number; secrets?: string | string[] } = {}): SignedRequest {
  return createSignedRequestSync(eventOrBody, { secrets: options.secrets ?? SECRET, timestamp: options.t ?? nowSeconds() });
}

/** A budget event as the rack sends it (every data value a string), at a chosen event time. */
export function budgetEvent(action: string, timestamp: string, data: Record<string, string> = {}) {
  return { action, status: 'success', timestamp, data: { app: 'billing-api', rack: 'example-rack', actor: 'system', ...data } };
}

/** `2026-04-27T10:30:00<fraction>Z`. */
export function at(fraction: string): string {
  return `2026-04-27T10:30:00${fraction}Z`;
}

export interface InboxHarness {
  readonly kind: ClientKind;
  readonly db: TestDatabase;
  readonly inbox: Inbox<unknown>;
  /** The deliveries table, as SQL (schema-qualified on PostgreSQL). */
  readonly table: string;
  readonly attemptsTable: string;
  receiver(options?: Omit<ReceiverOptions<unknown>, 'inbox' | 'secrets'>): Receiver<unknown>;
  /** Signs and receives. */
  deliver(receiver: Receiver<unknown>, eventOrBody: object | string, options?: { t?: number }): Promise<ReceiveResult>;
  /**
   * Delivers `n` budget events at `at('.<from + i>')` (three digits; `app(i)`'s app where given),
   * each accepted, one after another; resolves with their ids.
   */
  deliverMany(receiver: Receiver<unknown>, n: number, options?: { from?: number; app?: (i: number) => string }): Promise<string[]>;
  /** A worker stopped when the test finishes (if the test did not stop it). */
  work(receiver: Receiver<unknown>, options?: WorkOptions): Worker;
  /** Resolves once no delivery is pending or running (retries included). */
  settle(timeoutMs?: number): Promise<void>;
  /** The deliveries rows through the client's own API, oldest id first. */
  rows(): Promise<Record<string, unknown>[]>;
  count(where?: string): Promise<number>;
}

/** Opens a fresh database of `kind`, creates an inbox on it (migrated unless told not to) and cleans up after the test. */
export async function openInbox(kind: ClientKind, options: { migrate?: boolean } = {}): Promise<InboxHarness> {
  const db = await openDatabase(kind, { migrated: options.migrate ?? true });
  const workers: Worker[] = [];
  onTestFinished(async () => {
    // A worker whose handler hangs (a failing test) must not hang the cleanup: bounded.
    await Promise.race([Promise.allSettled(workers.map((worker) => worker.stop())), sleep(5000)]); // a bound, not a wait
    await db.close();
  });
  const inbox = createInbox({ database: db.database as unknown, table: db.table });
  if (options.migrate ?? true) await inbox.migrate();
  const table = db.table;
  const attemptsTable = `${db.table}_attempts`;
  const count = async (where = 'true') =>
    Number((await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table} WHERE ${where}`))[0]!.n);
  const harness: InboxHarness = {
    kind,
    db,
    inbox,
    table,
    attemptsTable,
    receiver: (receiverOptions = {}) => createReceiver<unknown>({ ...receiverOptions, secrets: SECRETS, inbox }),
    deliver(receiver, eventOrBody, deliverOptions = {}) {
      const request = sign(eventOrBody, deliverOptions);
      return receiver.receive({ body: request.bytes, headers: request.headers });
    },
    async deliverMany(receiver, n, { from = 0, app } = {}) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const data = app === undefined ? {} : { app: app(i) };
        const result = await harness.deliver(receiver, budgetEvent('app:budget:cap', at(`.${String(from + i).padStart(3, '0')}`), data));
        if (result.outcome !== 'accepted') throw new Error(`delivery ${i} was not accepted: ${JSON.stringify(result)}`);
        ids.push(result.id!);
      }
      return ids;
    },
    work(receiver, workOptions = {}) {
      const worker = inbox.work(receiver, { ...FAST, ...workOptions });
      workers.push(worker);
      return worker;
    },
    async settle(timeoutMs = 10_000) {
      await waitFor(
        async () => (await count(`state IN ('pending', 'running')`)) === 0,
        timeoutMs,
        () => 'no delivery pending or running',
        15,
      );
    },
    rows: () => db.query(`SELECT * FROM ${table} ORDER BY id`),
    count,
  };
  return harness;
}

/** A receiver whose app:budget:cap handler counts its calls and holds each until `release()`; `started` resolves at the first. */
export function heldHandler(harness: InboxHarness) {
  const receiver = harness.receiver();
  const first = deferred<void>();
  const gate = deferred<void>();
  let calls = 0;
  receiver.on('app:budget:cap', async () => {
    calls++;
    first.resolve();
    await gate.promise;
  });
  return { receiver, started: first.promise, calls: () => calls, release: () => gate.resolve() };
}

/**
 * Records which app's handlers run at once, and the order each app's events were seen in: for
 * order: 'per-app'. `enter` is the handler's body; its `ms` is the handler's own time (a pace, not
 * a wait), so that two handlers of one app running at once would overlap and be counted.
 */
export function appRecorder() {
  const running = new Map<string, number>();
  const seen = new Map<string, string[]>();
  let overlaps = 0;
  return {
    async enter(app: string, timestamp: string, ms: number) {
      const now = (running.get(app) ?? 0) + 1;
      if (now > 1) overlaps++;
      running.set(app, now);
      seen.set(app, [...(seen.get(app) ?? []), timestamp]);
      await sleep(ms); // the handler's pace
      running.set(app, running.get(app)! - 1);
    },
    seen,
    get overlaps() {
      return overlaps;
    },
  };
}

/** A table for handler effects, next to the inbox's (same schema, same database). */
export async function createEffectsTable(harness: InboxHarness): Promise<string> {
  const table = harness.kind === 'pglite' ? 'effects' : `${harness.db.schema}.effects`;
  await harness.db.query(`CREATE TABLE ${table} (delivery_id bigint NOT NULL, attempt integer NOT NULL)`);
  return table;
}

/**
 * Writes an effect through `context.transaction` with the client's own API, as a user would: a
 * pg PoolClient's `query`, postgres.js's `unsafe`, a PGlite transaction's `query`.
 */
export async function writeEffect(
  kind: ClientKind,
  transaction: unknown,
  table: string,
  deliveryId: string,
  attempt: number,
): Promise<void> {
  const text = `INSERT INTO ${table} (delivery_id, attempt) VALUES ($1, $2)`;
  switch (kind) {
    case 'pg':
      await (transaction as PoolClient).query(text, [deliveryId, attempt]);
      return;
    case 'postgres':
      await (transaction as postgres.TransactionSql).unsafe(text, [deliveryId, attempt]);
      return;
    case 'pglite':
      await (transaction as Transaction).query(text, [deliveryId, attempt]);
      return;
  }
}

/** Whether `transaction` is the client kind a user of `kind` expects, inside a transaction. */
export function isNativeTransaction(kind: ClientKind, transaction: unknown, database: unknown): boolean {
  if (transaction === database) return false;
  const candidate = transaction as Record<string, unknown>;
  switch (kind) {
    case 'pg':
      return typeof candidate['query'] === 'function' && typeof candidate['release'] === 'function';
    case 'postgres':
      return typeof transaction === 'function' && typeof candidate['unsafe'] === 'function' && typeof candidate['savepoint'] === 'function';
    case 'pglite':
      return typeof candidate['query'] === 'function' && typeof candidate['rollback'] === 'function';
  }
}

/** bytea as bytes, whatever the client returns (Buffer, Uint8Array). */
export function bytesOf(value: unknown): Buffer {
  if (!(value instanceof Uint8Array)) throw new TypeError(`expected bytea as bytes, got ${typeof value}`);
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}
