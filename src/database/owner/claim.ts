/**
 * Who owns a PGlite directory, proven by the kernel: the owner listens on a Unix socket inside the
 * directory, and a socket that accepts a connection has a live owner, whatever pid namespace,
 * thread or clock the asker runs in. A socket whose listener is gone refuses (ECONNREFUSED), so a
 * killed owner is known gone at once, without pids, lock ages or timestamps.
 *
 * Each owner's socket has a name of its own, `.s.PGSQL.<generation>` (the name PostgreSQL clients
 * look for in a socket directory, the generation standing for the port), and a name is taken only
 * by hard-linking a socket that already listens onto it, which the file system lets exactly one
 * process do. A newcomer takes generation N + 1 only when every socket it listed is gone; then it
 * lists again and yields to any other live socket (an owner it raced or a listing missed), so two
 * owners never both go on. Nothing is ever removed unless it refused a connection.
 */
import type * as NodeFs from 'node:fs/promises';
import type * as NodeNet from 'node:net';

export interface NodeParts {
  readonly fs: typeof NodeFs;
  readonly net: typeof NodeNet;
}

export const SOCKET_NAME = /^\.s\.PGSQL\.(\d{1,9})$/;
const socketName = (generation: number) => `.s.PGSQL.${generation}`;
/** A Unix socket's path fits in 104 bytes with its NUL on macOS (108 on Linux). */
const MAX_SOCKET_PATH = 103;

export type Claim =
  | {
      readonly role: 'owner';
      readonly generation: number;
      /** Listening on the directory's socket; the caller serves its connections. */
      readonly server: NodeNet.Server;
      /** Stops listening and removes the socket: the next process to open the directory owns it. */
      release(): Promise<void>;
      /** Says beside the socket that PGlite is open: from now on, an owner that answers nothing is stuck, not loading. */
      opened(): Promise<void>;
      /** Says beside the socket that PGlite is closing (its last writes and syncs can hold the process too). */
      closing(): Promise<void>;
    }
  | { readonly role: 'guest'; readonly generation: number; readonly path: string };

/**
 * The file beside an owner's socket that holds its pid, as PostgreSQL's `.s.PGSQL.<port>.lock` does,
 * then `loading`, `open` or `closing`: PGlite's start-up and close can hold the owner's process for seconds, during
 * which it answers nothing and is still no stuck owner (ask-owner.ts).
 */
export const pidFile = (socketPath: string): string => `${socketPath}.lock`;

export function socketPath(dir: string, generation: number): string {
  return `${dir}/${socketName(generation)}`;
}

async function generations(parts: NodeParts, dir: string): Promise<number[]> {
  const names = await parts.fs.readdir(dir);
  return names
    .map((name) => SOCKET_NAME.exec(name)?.[1])
    .filter((digits): digits is string => digits !== undefined)
    .map(Number)
    .sort((a, b) => b - a);
}

/** A connection to `path`, destroyed once `listen` calls `done` or `timeoutMs` have passed (then `late`). */
export function connectOnce<T>(
  parts: NodeParts,
  path: string,
  timeoutMs: number,
  late: T,
  listen: (socket: NodeNet.Socket, done: (answer: T) => void) => void,
): Promise<T> {
  return new Promise((resolve) => {
    const socket = parts.net.connect(path);
    const done = (answer: T) => {
      socket.destroy();
      resolve(answer);
    };
    listen(socket, done);
    socket.setTimeout(timeoutMs, () => done(late));
  });
}

/**
 * Whether something listens on the socket. A refusal or no file proves its owner gone; an owner
 * too busy to accept is still an owner. Any other failure (EACCES: the socket belongs to another
 * user) proves nothing either way: `unknown`, with its code, so the caller can say so.
 */
export function probe(parts: NodeParts, path: string, timeoutMs = 2_000): Promise<'live' | 'gone' | { readonly unknown: string }> {
  return connectOnce<'live' | 'gone' | { readonly unknown: string }>(parts, path, timeoutMs, 'live', (socket, done) => {
    socket.once('connect', () => done('live'));
    socket.once('error', ({ code, message }: NodeJS.ErrnoException) =>
      done(code === 'ECONNREFUSED' || code === 'ENOENT' ? 'gone' : { unknown: code ?? message }),
    );
  });
}

/** A probe that proved nothing: the one line that says what was seen and what to do. */
function unprovable(dir: string, path: string, code: string): Error {
  const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied: run as the user that owns the directory' : code;
  return Object.assign(
    new Error(
      `cannot tell whether the PGlite directory ${dir} has a live owner: connecting to ${path} failed with ${code} (${why}); ` +
        'if no process owns the directory, remove that socket file',
    ),
    { code: 'pglite_owner_unknown' },
  );
}

function listen(parts: NodeParts, path: string): Promise<NodeNet.Server> {
  return new Promise((resolve, reject) => {
    const server = parts.net.createServer();
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      // An accept that fails (EMFILE) is emitted here: without a listener it would end the process.
      server.on('error', () => {});
      // Serving others never keeps the owner's process alive: a script that ends without close()
      // exits as it did with a bare PGlite, and its socket then refuses, so the next caller takes over.
      server.unref();
      // The owner's user alone may connect (PostgreSQL's socket, in a 0700 directory): guests are superusers.
      parts.fs.chmod(path, 0o600).then(
        () => resolve(server),
        (error: unknown) => server.close(() => reject(error)),
      );
    });
  });
}

const close = (server: NodeNet.Server) => new Promise<void>((resolve) => server.close(() => resolve()));
const code = (error: unknown) => (error as { code?: string } | null)?.code;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Owns the directory or finds its owner. `dir` must exist and be absolute. Throws when the socket
 * path does not fit, or the directory cannot be read or written.
 */
export async function claimDirectory(parts: NodeParts, dir: string): Promise<Claim> {
  const longest = socketPath(dir, 999_999_999);
  if (new TextEncoder().encode(longest).length > MAX_SOCKET_PATH) {
    throw new Error(
      `the PGlite directory path ${dir} is too long for its owner's socket (at most ${MAX_SOCKET_PATH - 20} bytes): use a shorter path`,
    );
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    const seen = await generations(parts, dir);
    for (const generation of seen) {
      const path = socketPath(dir, generation);
      const seenThere = await probe(parts, path);
      if (seenThere === 'live') return { role: 'guest', generation, path };
      if (seenThere !== 'gone') throw unprovable(dir, path, seenThere.unknown);
    }
    const owned = await tryOwn(parts, dir, (seen[0] ?? 0) + 1, seen);
    if (owned !== undefined) return owned;
    await pause(2 + Math.floor(Math.random() * 20)); // a rival got there first, or both yielded
  }
  throw new Error(`cannot settle who owns the PGlite directory ${dir}: other processes keep claiming it`);
}

async function tryOwn(parts: NodeParts, dir: string, generation: number, gone: readonly number[]): Promise<Claim | undefined> {
  const path = socketPath(dir, generation);
  const aside = `${dir}/.s.rwt-${Math.random().toString(36).slice(2, 10)}`;
  const server = await listen(parts, aside);
  try {
    await parts.fs.link(aside, path);
  } catch (error) {
    await close(server);
    if (code(error) === 'EEXIST') return undefined;
    throw error;
  } finally {
    await parts.fs.unlink(aside).catch(() => {});
  }
  const { ino } = await parts.fs.stat(path);
  // A socket and the pid file beside it, gone.
  const remove = (socket: string) => Promise.all([pidFile(socket), socket].map((file) => parts.fs.unlink(file).catch(() => {})));
  const release = async () => {
    const now = await parts.fs.stat(path).catch(() => undefined);
    if (now?.ino === ino) await remove(path);
    await close(server);
  };
  for (const rival of await generations(parts, dir)) {
    if (rival !== generation && (await probe(parts, socketPath(dir, rival))) !== 'gone') {
      await release();
      return undefined;
    }
  }
  // Named beside the socket, so that a guest can say which process does not answer (ask-owner.ts).
  const pid = (globalThis as { process?: { pid?: number } }).process?.pid ?? 0;
  const state = (word: string) => parts.fs.writeFile(pidFile(path), `${pid}\n${word}\n`, { mode: 0o600 }).catch(() => {});
  await state('loading');
  // The sockets of owners known gone: a later listing need not probe them again.
  for (const old of gone) {
    const oldPath = socketPath(dir, old);
    if ((await probe(parts, oldPath)) === 'gone') await remove(oldPath);
  }
  return { role: 'owner', generation, server, release, opened: () => state('open'), closing: () => state('closing') };
}
