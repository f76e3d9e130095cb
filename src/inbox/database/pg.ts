import { Mutex, type Driver, type DriverTransaction, type Row, type Statement } from './driver.js';
import { beginWith, type PgPipelineClient, type PgQueryConfig } from './pg-opening.js';
import { statementHash } from './statement-hash.js';
import { ReentryGuard } from './reentry.js';

/** The parts of node-postgres we use, typed structurally: `pg` is an optional peer. */
interface PgResult {
  rows: Row[];
}
interface PgClientLike extends PgPipelineClient {
  query(config: string | PgQueryConfig, params?: readonly unknown[]): Promise<PgResult>;
  on(event: 'notification', listener: (message: { channel: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
}
export interface PgPoolClientLike extends PgClientLike {
  release(destroy?: boolean | Error): void;
}
export interface PgPoolLike {
  /** pg's own: `max` bounds the pool (default 10). */
  readonly options?: { readonly max?: number };
  query(config: string | PgQueryConfig, params?: readonly unknown[]): Promise<PgResult>;
  connect(callback: (error: Error | undefined, client: PgPoolClientLike | undefined) => void): void;
  readonly totalCount: number;
}
export interface PgClientOnlyLike extends PgClientLike {
  connect(): Promise<void>;
}

export function isPgPool(value: unknown): value is PgPoolLike {
  const candidate = value as Partial<PgPoolLike> | null;
  return typeof candidate?.query === 'function' && typeof candidate.connect === 'function' && typeof candidate.totalCount === 'number';
}

export function isPgClient(value: unknown): value is PgClientOnlyLike {
  const candidate = value as (Partial<PgClientOnlyLike> & { escapeIdentifier?: unknown }) | null;
  return (
    typeof candidate?.query === 'function' &&
    typeof candidate.connect === 'function' &&
    typeof candidate.on === 'function' &&
    typeof candidate.escapeIdentifier === 'function'
  );
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
  readonly #enabled: boolean;
  // The name of each text, computed once: hashing a statement of 600 characters on every query showed in profiles.
  readonly #names = new Map<string, string>();

  constructor(enabled: boolean) {
    this.#enabled = enabled;
  }

  config(text: string, params: readonly unknown[] | undefined): string | PgQueryConfig {
    return params === undefined ? text : this.statement(text, params);
  }

  /** A named query (pg parses and plans it once per connection, then only binds), or an unnamed one with the prepare option off. */
  statement(text: string, params: readonly unknown[]): PgQueryConfig {
    // Unnamed: parsed and planned on every call, which PgBouncer before 1.21 needs. The values still go.
    if (!this.#enabled) return { text, values: params };
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
 * must leave the pool. `exclusive`: nobody else can queue a query on `client` (checked out of a pool).
 */
async function inTransaction<R>(
  client: PgClientLike,
  fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>,
  onBroken: () => void,
  names: StatementNames,
  opening: Statement | undefined,
  exclusive: boolean,
): Promise<R> {
  const tx: DriverTransaction = { client, query: async (text, params) => (await client.query(names.config(text, params))).rows };
  let opened: Row[];
  try {
    opened = await beginWith(client, opening, (statement) => names.statement(statement.text, statement.params), exclusive);
  } catch (error) {
    // BEGIN itself may have failed (a broken connection), or the opening statement in the transaction.
    await client.query('ROLLBACK').catch(onBroken);
    throw error;
  }
  let result: R;
  try {
    result = await fn(tx, opened);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(onBroken);
    throw error;
  }
  return result;
}

/** A checked-out client's errors surface through its next query; unheard, they would end the process. */
const ignoreClientError = (): void => {};

/**
 * A client from the pool with an 'error' listener on it from the first moment. Not `await
 * pool.connect()`: the pool stops listening for the client's errors as it hands the client over,
 * and the code after the await runs a turn later; a connection terminated in that gap (its FATAL
 * read along with the ReadyForQuery) emits an 'error' nobody hears, which ends the process. The
 * callback runs in the pool's own turn, so nothing is left unheard.
 */
export function checkOut(pool: PgPoolLike): Promise<PgPoolClientLike> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client) => {
      if (error || client === undefined) {
        reject(error ?? new Error('the pg pool handed over no client'));
        return;
      }
      client.on('error', ignoreClientError);
      resolve(client);
    });
  });
}

/** Back to the pool, or out of it when its connection is broken. */
export function checkIn(client: PgPoolClientLike, broken: boolean): void {
  client.removeListener('error', ignoreClientError);
  client.release(broken ? true : undefined);
}

export function pgPoolDriver(pool: PgPoolLike, prepare: boolean): Driver {
  const names = new StatementNames(prepare);
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
        return await inTransaction(
          client,
          fn,
          () => {
            broken = true;
          },
          names,
          opening,
          true,
        );
      } finally {
        checkIn(client, broken);
      }
    },
    async listen(channel, onNotify, onError) {
      const client = await checkOut(pool);
      const onNotification = (message: { channel: string }) => {
        if (message.channel === channel) onNotify();
      };
      let released = false;
      const onClientError = (error: Error) => {
        if (released) return;
        released = true;
        checkIn(client, true);
        onError(error);
      };
      client.on('notification', onNotification);
      client.on('error', onClientError);
      try {
        await client.query(`LISTEN ${quote(channel)}`);
      } catch (error) {
        if (!released) {
          released = true;
          checkIn(client, true);
        }
        throw error;
      }
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
    transaction: (fn, opening) =>
      serial(() =>
        inTransaction(
          client,
          (tx, opened) => guard.inside(() => fn(tx, opened)),
          () => {},
          names,
          opening,
          // The application may queue its own queries on the client it passed: its mode is left as it is.
          false,
        ),
      ),
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

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
