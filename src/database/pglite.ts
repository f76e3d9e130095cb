import { WebhookInboxError } from './errors.js';
import { hasMethods, openingFirst, type Driver, type Row } from './driver.js';
import { claimDirectory } from './owner/claim.js';
import { loadNodeParts, ownedInstances } from './owner/open.js';
import { closeServed, servePGlite, type ServablePGlite } from './owner/serve.js';
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
  return hasMethods(value, ['query', 'exec', 'transaction']);
}

let warned = false;

/**
 * A PGlite instance on a directory, the way before openPGlite(): it opened the directory's files
 * before anyone could tell whether another process owns them, so it is deprecated. It still claims
 * the directory before its first statement: as the owner it serves the instance on the directory's
 * socket (and gives the directory up when the instance is closed); when another process or thread
 * owns it, every statement rejects with the one line that says to use openPGlite(dir).
 */
function holdDirectory(db: PGliteLike): Promise<void> | undefined {
  const dir = fileSystemDir(db.dataDir);
  if (dir === undefined || ownedInstances.has(db)) return undefined;
  if (!warned) {
    warned = true;
    const process = (globalThis as { process?: { emitWarning?(message: string, options: object): void } }).process;
    process?.emitWarning?.(
      'createInbox({ database: new PGlite(dir) }) opens the directory before its owner is known; use createInbox({ database: await openPGlite(dir) })',
      { type: 'DeprecationWarning', code: 'RACK_WEBHOOKS_PGLITE_INSTANCE' },
    );
  }
  // One claim per instance, however many inboxes (tables) it is given to: the second would find the first's socket.
  const claim =
    claims.get(db) ??
    claimInstance(db, dir).catch((error: unknown) => {
      throw new WebhookInboxError('inbox_unavailable', `createInbox: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    });
  claims.set(db, claim);
  return claim;
}

const claims = new WeakMap<object, Promise<void>>();

async function claimInstance(db: PGliteLike, dir: string): Promise<void> {
  const node = await loadNodeParts().catch(() => undefined);
  if (node === undefined) return; // not Node: no directory to claim
  const absolute = node.resolve(dir);
  await node.fs.mkdir(absolute, { recursive: true });
  const claim = await claimDirectory(node, absolute);
  if (claim.role === 'guest') {
    throw new Error(
      `the PGlite database in ${dir} is owned by another process or thread; ` +
        'pass createInbox({ database: await openPGlite(dir) }) to reach it through its owner, instead of a PGlite instance of your own',
    );
  }
  const serving = servePGlite(Promise.resolve(db as unknown as ServablePGlite), claim.server);
  await claim.opened();
  const close = db.close;
  if (typeof close !== 'function') return; // served until the process exits
  Object.defineProperty(db, 'close', {
    configurable: true,
    writable: true,
    value: () => closeServed(serving, claim, () => close.call(db)),
  });
}

/** The directory a PGlite `dataDir` keeps its files in; undefined for memory, IndexedDB and OPFS. */
export function fileSystemDir(dataDir: unknown): string | undefined {
  if (typeof dataDir !== 'string' || dataDir === '') return undefined;
  if (dataDir.startsWith('file://')) return dataDir.slice('file://'.length) || undefined;
  return /^(memory|idb|opfs-ahp|memfs2opfs):\/\//.test(dataDir) ? undefined : dataDir;
}

/**
 * PGlite runs in this thread and answers without a turn of the event loop (its promises resolve as
 * microtasks): a worker draining a backlog went from statement to statement for 22 s without the
 * process accepting a connection (HTTP deliveries, probes, guests). Before a statement, when the
 * event loop last turned here 10 ms ago or more, it gets a turn.
 */
const TURN_MS = 10;
let lastTurn = 0;
const nextTurn = (resolve: () => void) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0));

async function letTheEventLoopTurn(): Promise<void> {
  if (Date.now() - lastTurn < TURN_MS) return;
  await new Promise<void>(nextTurn);
  lastTurn = Date.now();
}

/** PGlite is one connection in this process: it queues transactions itself (and a guest's, in serve.ts). */
export function pgliteDriver(db: PGliteLike, { owned = false }: { owned?: boolean } = {}): Driver {
  const guard = new ReentryGuard();
  const held = owned ? undefined : holdDirectory(db);
  held?.catch(() => {}); // reported by every statement
  return {
    kind: 'pglite',
    parallel: false,
    maxConnections: undefined,
    async query(text, params) {
      guard.check();
      if (held !== undefined) await held;
      await letTheEventLoopTurn();
      return (await db.query(text, params)).rows;
    },
    transaction(fn, opening) {
      guard.check();
      const inside = openingFirst(fn, opening);
      const run = () =>
        db.transaction((tx) =>
          guard.inside(() =>
            inside({
              client: tx,
              query: async (text, params) => {
                await letTheEventLoopTurn();
                return (await tx.query(text, params)).rows;
              },
            }),
          ),
        );
      return held === undefined ? run() : held.then(run);
    },
    async listen(channel, onNotify) {
      if (held !== undefined) await held;
      return db.listen(channel, () => onNotify());
    },
  };
}
