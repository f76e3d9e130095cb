/**
 * `openPGlite(dir)`: a PGlite directory, opened only once its owner is settled (claim.ts). The
 * first process (or thread) becomes the owner: it opens PGlite on the directory and serves it on
 * the directory's socket (serve.ts). Every other one becomes a guest: it never opens the
 * directory's files, and reaches the owner's database through that socket with `pg`.
 *
 * Node only, and loaded only there: node:fs and node:net are imported when it is called.
 */
import { claimDirectory, type Claim, type NodeParts } from './claim.js';
import { durableOptions, syncTree } from './durable-files.js';
import { DirectoryGuest, guestClient, type PgModule } from './guest.js';
import { checkDirectory, makePrivate } from './permissions.js';
import { closeServed, servePGlite, type ServablePGlite } from './serve.js';

/** A PGlite directory as this process holds it; pass it to `createInbox({ database })`. */
export interface PGliteDirectory {
  /** The directory, absolute. */
  readonly dir: string;
  /**
   * `'owner'`: this process opened PGlite on the directory and serves it to others until
   * `close()`. `'guest'`: another process or thread owns it; this one goes through its socket.
   * A guest whose owner goes away (closed, killed, a command that ended) claims the directory again
   * at its next connection: it follows the next owner, or becomes the owner and reads `'owner'`
   * from then on (its `client` stays the pool, which then reaches the PGlite it opened).
   */
  readonly role: 'owner' | 'guest';
  /** The client: the `PGlite` instance for the owner, a `pg` Pool on the owner's socket for a guest. */
  readonly client: unknown;
  /** Closes PGlite and gives the directory up (owner), or ends the pool (guest). Calling it again is harmless. */
  close(): Promise<void>;
}

/** Options of {@link openPGlite}. */
export interface OpenPGliteOptions {
  /**
   * Options for `new PGlite(dir, options)` in the owner (extensions, debug level, ...).
   *
   * @defaultValue `{}`
   */
  readonly pglite?: Readonly<Record<string, unknown>>;
  /**
   * Connections of a guest's `pg` Pool to the owner: a worker needs one per running handler, plus
   * one for `receive()` and one for LISTEN (see `work({ concurrency })`). Made only when needed.
   *
   * @defaultValue `10`
   */
  readonly poolSize?: number;
}

const PGLITE_PACKAGE = '@electric-sql/pglite';
/** Room for a worker of concurrency 4 (the examples'), its LISTEN and receive(), as a pg Pool of max 10 in the README. */
const DEFAULT_POOL_SIZE = 10;
const dynamicImport = (name: string): Promise<unknown> => import(/* webpackIgnore: true */ /* @vite-ignore */ name);

export async function loadNodeParts(): Promise<NodeParts & { resolve(path: string): string }> {
  const [fs, net, path] = (await Promise.all([
    dynamicImport('node:fs/promises'),
    dynamicImport('node:net'),
    dynamicImport('node:path'),
  ])) as [NodeParts['fs'], NodeParts['net'], { resolve(path: string): string }];
  return { fs, net, resolve: path.resolve };
}

/** A PGliteDirectory, told apart by shape: a copy of this module in another bundle makes the same one. */
export function isPGliteDirectory(value: unknown): value is PGliteDirectory {
  const candidate = value as Partial<PGliteDirectory> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    (candidate.role === 'owner' || candidate.role === 'guest') &&
    typeof candidate.dir === 'string' &&
    typeof candidate.close === 'function' &&
    'client' in candidate
  );
}

/**
 * Opens the PGlite database in `dir` (created when missing), as its owner or as a guest of the
 * process that owns it. Rejects in one line when the directory cannot be read, its socket path is
 * too long, its owner does not answer, or a guest finds `pg` missing.
 *
 * @example
 * ```ts
 * import { createInbox, openPGlite } from 'rack-webhooks/inbox';
 *
 * const database = await openPGlite('./inbox-data'); // 'owner', or 'guest' of a running app
 * const inbox = createInbox({ database });
 * await inbox.migrate();
 * // ... on shutdown:
 * await database.close();
 * ```
 */
export function openPGlite(dir: string, options: OpenPGliteOptions = {}): Promise<PGliteDirectory> {
  return openDirectory(dir, options);
}

/** Instances openPGlite opened: createInbox given one of them bare knows it is this process's own. */
export const ownedInstances = new WeakSet<object>();

/**
 * openPGlite, with `beforeOpen` called in the owner once the directory is its own and before PGlite
 * opens it (the CLI checks there that it holds a database); a throw gives the directory up again.
 */
export async function openDirectory(dir: string, options: OpenPGliteOptions, beforeOpen?: (dir: string) => void): Promise<PGliteDirectory> {
  const node = await loadNodeParts();
  const absolute = node.resolve(dir);
  // A directory that is not there yet has no owner: this process will be it, so PGlite must load.
  const exists = (await node.fs.stat(absolute).catch(() => undefined)) !== undefined;
  if (!exists) await loadPGlite();
  await node.fs.mkdir(absolute, { recursive: true, mode: 0o700 });
  await checkDirectory(node.fs, absolute, 'any');
  for (let attempt = 0; ; attempt++) {
    const claim = await claimDirectory(node, absolute);
    if (claim.role === 'owner') {
      const owned = await openOwned(absolute, claim, options, beforeOpen, { fs: node.fs, created: !exists });
      return { dir: absolute, role: 'owner', client: owned.client, close: owned.close };
    }
    try {
      return await openAsGuest(absolute, claim, options, beforeOpen, node);
    } catch (error) {
      // The owner went away between the claim and the connection: claim again (it may be ours now).
      if (attempt < 3 && isConnectionLost(error)) continue;
      throw error;
    }
  }
}

/**
 * The owner went away or began closing while this process connected: refused, no socket, reset,
 * EPIPE (the startup message written to an owner that had just closed: a CLI run that ended made
 * an app starting beside it die at start-up), or 57P03 (the closing owner's answer).
 */
const isConnectionLost = (error: unknown) => CONNECTION_LOST.has((error as { code?: unknown } | null)?.code);
const CONNECTION_LOST = new Set<unknown>(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', '57P03']);

interface PGliteClass {
  readonly defaultStartParams?: readonly string[];
  new (
    dataDir: string,
    options?: Record<string, unknown>,
  ): ServablePGlite & { waitReady: Promise<void>; closed?: boolean; close(): Promise<void> };
}

const loadPGlite = async () =>
  (await loadPeer(
    PGLITE_PACKAGE,
    `openPGlite needs the ${PGLITE_PACKAGE} package, which is not installed: run npm install ${PGLITE_PACKAGE}`,
  )) as { PGlite: PGliteClass };

/**
 * PGlite on a claimed directory, served on its socket from the moment the claim is made (a guest
 * that connects while PGlite loads waits for it). `close` closes PGlite and only then gives the
 * directory up (serve.ts's closeServed). `created`: this process made the directory (synced once).
 */
export async function openOwned(
  dir: string,
  claim: Claim & { role: 'owner' },
  options: OpenPGliteOptions,
  beforeOpen: ((dir: string) => void) | undefined,
  { fs, created }: { readonly fs: NodeParts['fs']; readonly created: boolean },
): Promise<{ readonly client: unknown; close(): Promise<void> }> {
  let ready!: (db: ServablePGlite) => void;
  let failed!: (error: unknown) => void;
  const opening = new Promise<ServablePGlite>((resolve, reject) => ((ready = resolve), (failed = reject)));
  const serving = servePGlite(opening, claim.server);
  let db: InstanceType<PGliteClass> | undefined;
  try {
    beforeOpen?.(dir);
    await checkDirectory(fs, dir, 'owner');
    await makePrivate(fs, dir);
    const { PGlite } = await loadPGlite();
    db = new PGlite(dir, { ...(await durableOptions(PGlite, dir)), ...options.pglite });
    ownedInstances.add(db);
    await db.waitReady;
    if (created) await syncTree(dir);
  } catch (error) {
    failed(error);
    const made = db;
    await closeServed(serving, claim, async () => made !== undefined && made.closed !== true && made.close().catch(() => {}));
    if (made === undefined) throw error;
    throw new Error(`cannot open the PGlite database in ${dir}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  const opened = db;
  ready(opened);
  await claim.opened();
  let closing: Promise<void> | undefined;
  return { client: opened, close: () => (closing ??= closeServed(serving, claim, async () => opened.closed !== true && opened.close())) };
}

async function openAsGuest(
  dir: string,
  claim: Claim & { role: 'guest' },
  options: OpenPGliteOptions,
  beforeOpen: ((dir: string) => void) | undefined,
  node: NodeParts,
): Promise<PGliteDirectory> {
  const missing = `the PGlite database in ${dir} is owned by another process or thread, reached through its socket with the pg package, which is not installed: run npm install pg`;
  const pg = (await loadPeer('pg', missing)) as PgModule & { default?: PgModule };
  const { Pool, Client } = pg.default ?? pg;
  const guest = new DirectoryGuest(node, dir, claim.generation, (taken) =>
    // A guest taking the directory over: its files exist, and are checked and made private as any owner's.
    openOwned(dir, taken, options, beforeOpen, { fs: node.fs, created: false }),
  );
  const pool = new Pool({
    host: dir,
    port: claim.generation,
    user: 'postgres',
    database: 'postgres',
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    Client: guestClient(Client, guest),
    // Generous: an owner that has just claimed the directory answers once PGlite has booted, and
    // a guest taking the directory over boots PGlite itself.
    connectionTimeoutMillis: 60_000,
  });
  pool.on('error', () => {}); // an idle connection lost with its owner: the next connection finds the next one
  const end = async () => {
    await pool.end().catch(() => {});
    await guest.close();
  };
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await end();
    // Gone meanwhile: the caller claims again; or unreachable, which says it all, with the owner's pid.
    if (isConnectionLost(error) || (error as { code?: unknown } | null)?.code === 'pglite_owner_unreachable') throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `the PGlite database in ${dir} is owned by a process that does not answer on ${claim.path} (${reason}): ` +
        'stop that process (or wait for it), then try again; PGlite serves one owner at a time',
      { cause: error },
    );
  }
  let ended: Promise<void> | undefined;
  return {
    dir,
    get role() {
      return guest.role;
    },
    client: pool,
    close: () => (ended ??= end()),
  };
}

/** A missing optional peer: `peer` names the package, the message says what to install. */
export class MissingPeerError extends Error {
  constructor(
    message: string,
    readonly peer: string,
  ) {
    super(message);
  }
}

async function loadPeer(name: string, missing: string): Promise<unknown> {
  try {
    return await dynamicImport(name);
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && typeof message === 'string' && message.includes(`'${name}'`)) {
      throw new MissingPeerError(missing, name);
    }
    throw error;
  }
}
