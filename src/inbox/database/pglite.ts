import { WebhookInboxError } from '../errors.js';
import { openingFirst, type Driver, type Row } from './driver.js';
import { fileSystemDir, holdPGliteDirectory, type LockFs } from './pglite-lock.js';
import { ReentryGuard } from './reentry.js';

/** The parts of PGlite we use, typed structurally: `@electric-sql/pglite` is an optional peer. */
interface PGliteQueryable {
  query(text: string, params?: readonly unknown[]): Promise<{ rows: Row[] }>;
  exec(text: string): Promise<unknown>;
}
export interface PGliteLike extends PGliteQueryable {
  readonly dataDir?: string;
  readonly closed?: boolean;
  close?(): Promise<void>;
  transaction<R>(fn: (tx: PGliteQueryable) => Promise<R>): Promise<R>;
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
}

export function isPGlite(value: unknown): value is PGliteLike {
  const candidate = value as Partial<PGliteLike> | null;
  return typeof candidate?.query === 'function' && typeof candidate.exec === 'function' && typeof candidate.transaction === 'function';
}

function refused(error: unknown): WebhookInboxError {
  return new WebhookInboxError('inbox_unavailable', `createInbox: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}

/**
 * A PGlite on a directory is held by this process (see pglite-lock.ts): at once where the runtime
 * hands out node:fs synchronously (Node 20.16+, Bun, Deno), so createInbox throws; else before the
 * first statement, which rejects. Nothing for data in memory, IndexedDB or OPFS.
 */
function holdDirectory(db: PGliteLike): Promise<void> | undefined {
  if (fileSystemDir(db.dataDir) === undefined) return undefined;
  const node = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process;
  const fs = node?.getBuiltinModule?.('node:fs') as LockFs | undefined;
  if (fs !== undefined) {
    try {
      holdPGliteDirectory(fs, db);
    } catch (error) {
      throw refused(error);
    }
    return undefined;
  }
  return import(/* webpackIgnore: true */ /* @vite-ignore */ 'node:fs')
    .then(
      (loaded) => holdPGliteDirectory(loaded as unknown as LockFs, db),
      () => undefined, // not Node: no directory to hold
    )
    .catch((error: unknown) => Promise.reject(refused(error)));
}

/** PGlite is one connection in this process: it queues transactions itself. */
export function pgliteDriver(db: PGliteLike): Driver {
  const guard = new ReentryGuard();
  const held = holdDirectory(db);
  held?.catch(() => {}); // reported by every statement
  return {
    kind: 'pglite',
    parallel: false,
    maxConnections: undefined,
    async query(text, params) {
      guard.check();
      if (held !== undefined) await held;
      return (await db.query(text, params)).rows;
    },
    transaction(fn, opening) {
      guard.check();
      const inside = openingFirst(fn, opening);
      const run = () =>
        db.transaction((tx) =>
          guard.inside(() => inside({ client: tx, query: async (text, params) => (await tx.query(text, params)).rows })),
        );
      return held === undefined ? run() : held.then(run);
    },
    async listen(channel, onNotify) {
      if (held !== undefined) await held;
      const unlisten = await db.listen(channel, () => onNotify());
      return () => unlisten();
    },
  };
}
