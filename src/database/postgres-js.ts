import { hasMethods, openingFirst, type Driver, type Row } from './driver.js';

/** The parts of postgres.js (`postgres`) we use, typed structurally: it is an optional peer. */
export interface PostgresJsLike {
  /** postgres.js's own: `max` bounds the pool (default 10). */
  readonly options?: { readonly max?: number };
  unsafe(text: string, params?: readonly unknown[], options?: { prepare?: boolean }): PromiseLike<Row[]>;
  begin<R>(fn: (tx: PostgresJsLike) => Promise<R>): Promise<R>;
  listen(channel: string, onNotify: (payload: string) => void, onListen?: () => void): Promise<{ unlisten(): Promise<void> }>;
}

export function isPostgresJs(value: unknown): value is PostgresJsLike {
  // postgres.js's `sql` is a tagged-template function with methods.
  return typeof value === 'function' && hasMethods(value, ['unsafe', 'begin']);
}

/**
 * The rows of a postgres.js result, in order. postgres.js 3.4.9 (src/connection.js) keeps the index
 * of the next row per connection and resets it only at a statement's CommandComplete: a connection
 * cut after a DataRow but before its CommandComplete (a restart, a failover, a proxy reset under
 * load) keeps that index across the reconnect, and the next statement on that connection fills its
 * result from there: `[<hole>, row]` for a one-row answer, whose `[0]` reads undefined. The rows
 * themselves are right and in order; only their places are shifted. Array methods skip holes:
 * `forEach` takes exactly the rows the server sent. Only with `fetch_types: false` (the array-types
 * query a new connection runs otherwise resets the index first), and not in a transaction (its
 * BEGIN's CommandComplete resets it).
 */
export function postgresJsRows(result: readonly Row[]): Row[] {
  const rows: Row[] = [];
  result.forEach((row) => rows.push(row));
  return rows;
}

export function postgresJsDriver(sql: PostgresJsLike, prepare: boolean): Driver {
  // Prepared (parsed and planned once per connection) unless the caller runs behind a pooler that cannot hold them.
  const options = { prepare };
  return {
    kind: 'postgres',
    parallel: true,
    maxConnections: sql.options?.max,
    async query(text, params = []) {
      return postgresJsRows(await sql.unsafe(text, params, options));
    },
    transaction(fn, opening) {
      const inside = openingFirst(fn, opening);
      return sql.begin((tx) =>
        inside({ client: tx, query: async (text, params = []) => postgresJsRows(await tx.unsafe(text, params, options)) }),
      );
    },
    async listen(channel, onNotify) {
      // postgres.js keeps its own LISTEN connection and reconnects it: nothing to watch here.
      const subscription = await sql.listen(channel, () => onNotify());
      return () => subscription.unlisten();
    },
  };
}
