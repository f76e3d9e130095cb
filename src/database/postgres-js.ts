import { openingFirst, type Driver, type Row } from './driver.js';

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
  const candidate = value as { unsafe?: unknown; begin?: unknown } | null;
  return typeof value === 'function' && typeof candidate?.unsafe === 'function' && typeof candidate.begin === 'function';
}

export function postgresJsDriver(sql: PostgresJsLike, prepare: boolean): Driver {
  // Prepared (parsed and planned once per connection) unless the caller runs behind a pooler that cannot hold them.
  const options = { prepare };
  return {
    kind: 'postgres',
    parallel: true,
    maxConnections: sql.options?.max,
    async query(text, params = []) {
      return [...(await sql.unsafe(text, params, options))];
    },
    transaction(fn, opening) {
      const inside = openingFirst(fn, opening);
      return sql.begin((tx) => inside({ client: tx, query: async (text, params = []) => [...(await tx.unsafe(text, params, options))] }));
    },
    async listen(channel, onNotify) {
      // postgres.js keeps its own LISTEN connection and reconnects it: nothing to watch here.
      const subscription = await sql.listen(channel, () => onNotify());
      return () => subscription.unlisten();
    },
  };
}
