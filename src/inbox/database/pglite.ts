import type { Driver, Row } from './driver.js';
import { ReentryGuard } from './reentry.js';

/** The parts of PGlite we use, typed structurally: `@electric-sql/pglite` is an optional peer. */
interface PGliteQueryable {
  query(text: string, params?: readonly unknown[]): Promise<{ rows: Row[] }>;
  exec(text: string): Promise<unknown>;
}
export interface PGliteLike extends PGliteQueryable {
  transaction<R>(fn: (tx: PGliteQueryable) => Promise<R>): Promise<R>;
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
}

export function isPGlite(value: unknown): value is PGliteLike {
  const candidate = value as Partial<PGliteLike> | null;
  return typeof candidate?.query === 'function' && typeof candidate.exec === 'function' && typeof candidate.transaction === 'function';
}

/** PGlite is one connection in this process: it queues transactions itself. */
export function pgliteDriver(db: PGliteLike): Driver {
  const guard = new ReentryGuard();
  return {
    kind: 'pglite',
    parallel: false,
    maxConnections: undefined,
    async query(text, params) {
      guard.check();
      return (await db.query(text, params)).rows;
    },
    transaction(fn) {
      guard.check();
      return db.transaction((tx) =>
        guard.inside(() => fn({ client: tx, query: async (text, params) => (await tx.query(text, params)).rows })),
      );
    },
    async listen(channel, onNotify) {
      const unlisten = await db.listen(channel, () => onNotify());
      return () => unlisten();
    },
  };
}
