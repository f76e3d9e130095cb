import { hasMethods, Mutex, type Driver, type DriverTransaction, type Row, type Statement } from './driver.js';
import { PgLanes } from './pg-lane.js';
import { checkIn, checkOut, committedOrThrow, rollingBack } from './pg-client.js';
import type { PgClientLike, PgClientOnlyLike, PgPoolLike } from './pg-client.js';
import { beginWith, type PgQueryConfig } from './pg-opening.js';
import { statementHash } from './statement-hash.js';
import { ReentryGuard } from './reentry.js';
import { quoteIdentifier as quote } from './quote-identifier.js';

export function isPgPool(value: unknown): value is PgPoolLike {
  return hasMethods(value, ['query', 'connect']) && typeof (value as Partial<PgPoolLike>).totalCount === 'number';
}

export function isPgClient(value: unknown): value is PgClientOnlyLike {
  return hasMethods(value, ['query', 'connect', 'on', 'escapeIdentifier']);
}

/**
 * The inbox sends a handful of statements, each thousands of times: as named statements PostgreSQL
 * parses and plans each once per connection (measured: accept throughput 0.38–0.50x of pgbench
 * unnamed, 0.62–0.66x named). A name stands for one text on a connection, and a pool's connections
 * are shared by every inbox on it: so the name is made from the text itself (a 64-bit hash of the
 * whole text, then the table it names), the same in every process and in any order of
 * first use, and readable in `pg_prepared_statements`. A counter would differ between processes,
 * and its map would grow with every new text.
 */
export function statementName(text: string): string {
  const hash = statementHash(text);
  const table = /\b(?:FROM|INTO|UPDATE)\s+((?:"(?:[^"]|"")+"|[\w$]+)(?:\.(?:"(?:[^"]|"")+"|[\w$]+))?)/i.exec(text)?.[1] ?? '';
  // PostgreSQL cuts a name at 63 bytes: the hash comes first so that the cut only shortens the table.
  const shown = table.replace(/[^\w.]/g, '');
  return (shown === '' ? `rack_webhooks_${hash}` : `rack_webhooks_${hash}_${shown}`).slice(0, 63);
}

/** At most this many names are remembered: the inbox's own statements, for each table on the pool. */
const NAMES_KEPT = 256;

export class StatementNames {
  // The name of each text, computed once: hashing a statement of 600 characters on every query showed in profiles.
  readonly #names = new Map<string, string>();

  constructor(private readonly enabled: boolean) {}

  readonly config = (text: string, params: readonly unknown[] | undefined): string | PgQueryConfig =>
    params === undefined ? text : this.#named(text, params);

  readonly statement = ({ text, params }: Statement): PgQueryConfig => this.#named(text, params);

  /** A named query (pg parses and plans it once per connection, then only binds), or an unnamed one with the prepare option off. */
  #named(text: string, params: readonly unknown[]): PgQueryConfig {
    // Unnamed: parsed and planned on every call, which PgBouncer before 1.21 needs. The values still go.
    if (!this.enabled) return { text, values: params };
    let name = this.#names.get(text);
    if (name === undefined) {
      if (this.#names.size >= NAMES_KEPT) this.#names.clear();
      this.#names.set(text, (name = statementName(text)));
    }
    return { name, text, values: params };
  }
}

/**
 * BEGIN (with `opening` in the same round trip, see pg-opening.ts), fn, COMMIT; ROLLBACK when
 * anything throws. Calls `onBroken` when even the ROLLBACK failed: that connection is broken and
 * must leave the pool (a lone Client has none to leave).
 */
async function inTransaction<R>(
  client: PgClientLike,
  names: StatementNames,
  opening: Statement | undefined,
  fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>,
  onBroken = () => {},
): Promise<R> {
  const tx: DriverTransaction = { client, query: async (text, params) => (await client.query(names.config(text, params))).rows };
  // BEGIN itself may fail (a broken connection), or the opening statement in the transaction.
  const opened = await rollingBack(client, onBroken, () => beginWith(client, opening, names.statement));
  return rollingBack(client, onBroken, async () => {
    const result = await fn(tx, opened);
    committedOrThrow(await client.query('COMMIT'));
    return result;
  });
}

/**
 * A pg Pool without `connectionTimeoutMillis` (pg's default, 0) waits forever for a connect: against
 * a database that accepts connections and never answers, each connection it opens then stays stuck,
 * the pool stays full of them, and every delivery is refused for as long as the process lives, even
 * once the database answers again (issue 38, point 5: 60 of 60). Only the pool can end its own
 * connects, so such a pool is refused at start-up with the fix.
 */
function requireConnectTimeout(pool: PgPoolLike): void {
  if (!pool.options) return;
  const timeout = pool.options.connectionTimeoutMillis;
  if (typeof timeout === 'number' && timeout > 0 && Number.isFinite(timeout)) return;
  throw new TypeError(
    `createInbox: this pg Pool has connectionTimeoutMillis ${String(timeout)}: a connect to a database that accepts connections ` +
      'and never answers would never end, and its stuck connections would keep every delivery refused (503) after the database ' +
      'answers again. Pass a bound, e.g. new pg.Pool({ connectionString, connectionTimeoutMillis: 5000 }).',
  );
}

export function pgPoolDriver(pool: PgPoolLike, prepare: boolean): Driver {
  requireConnectTimeout(pool);
  const names = new StatementNames(prepare);
  const lanes = new PgLanes(pool, names.statement, names.config);
  return {
    kind: 'pg',
    parallel: true,
    maxConnections: pool.options?.max,
    async query(text, params) {
      return (await pool.query(names.config(text, params))).rows;
    },
    async transaction(fn, opening) {
      const client = await checkOut(pool);
      let broken = false;
      try {
        return await inTransaction(client, names, opening, fn, () => void (broken = true));
      } finally {
        checkIn(client, broken);
      }
    },
    chained: (fn, opening, handedOver) => lanes.transaction(fn, opening, handedOver),
    async listen(channel, onNotify, onError) {
      const client = await checkOut(pool);
      const onNotification = (message: { channel: string }) => {
        if (message.channel === channel) onNotify();
      };
      let released = false;
      /** Out of the pool, once (true then); its 'error' listener stays on it, for any error after. */
      const broken = () => {
        if (released) return false;
        released = true;
        checkIn(client, true);
        return true;
      };
      const onClientError = (error: Error) => {
        if (broken()) onError(error);
      };
      client.on('notification', onNotification);
      client.on('error', onClientError);
      await client.query(`LISTEN ${quote(channel)}`).catch((error: unknown) => {
        broken();
        throw error;
      });
      return async () => {
        if (released) return;
        released = true;
        client.removeListener('notification', onNotification);
        await client.query(`UNLISTEN ${quote(channel)}`).catch(() => {});
        client.removeListener('error', onClientError);
        checkIn(client, false);
      };
    },
  };
}

/** One `pg.Client`: one connection, so every call waits its turn. */
export function pgClientDriver(client: PgClientOnlyLike, prepare: boolean): Driver {
  const names = new StatementNames(prepare);
  const mutex = new Mutex();
  const guard = new ReentryGuard();
  const serial = <R>(fn: () => Promise<R>): Promise<R> => {
    guard.check();
    return mutex.run(fn);
  };
  return {
    kind: 'pg',
    parallel: false,
    maxConnections: 1,
    query: (text, params) => serial(async () => (await client.query(names.config(text, params))).rows),
    transaction: (fn, opening) => serial(() => inTransaction(client, names, opening, (tx, opened) => guard.inside(() => fn(tx, opened)))),
    async listen(channel, onNotify) {
      const onNotification = (message: { channel: string }) => {
        if (message.channel === channel) onNotify();
      };
      client.on('notification', onNotification);
      await mutex.run(() => client.query(`LISTEN ${quote(channel)}`));
      return async () => {
        client.removeListener('notification', onNotification);
        await mutex.run(() => client.query(`UNLISTEN ${quote(channel)}`)).catch(() => {});
      };
    },
  };
}
