/**
 * PGlite is PostgreSQL inside one process: two processes (an app and `rack-webhooks inbox replay`)
 * opening the same directory each keep their own view of it, so one's writes are lost or clobber
 * the other's, and PGlite itself does not stop them. Whoever opens a directory holds a lock file in
 * it until it closes: the CLI before it opens PGlite, an app when `createInbox` gets a PGlite
 * instance on a directory. A lock whose process is gone (killed) is taken over.
 *
 * The lock file holds the pid alone (as every version has written it). It is created complete
 * (written aside, then hard-linked into place), so a reader never sees it half-written; exactly
 * one of two processes starting at once links it. A stale lock is removed only under a second,
 * short-lived guard file and after being judged again there, so two processes taking over the same
 * stale lock can never remove each other's fresh one: exactly one of them links the next lock. A
 * pid the system has given to a new process since the lock was written (the process started after
 * the file's time, read from /proc on Linux) counts as gone.
 *
 * Node only, and loaded only there: the functions take `node:fs` from their caller.
 */
import type * as NodeFs from 'node:fs';

export const LOCK_FILE = '.rack-webhooks.lock';

export type LockFs = Pick<
  typeof NodeFs,
  | 'closeSync'
  | 'linkSync'
  | 'mkdirSync'
  | 'openSync'
  | 'readFileSync'
  | 'realpathSync'
  | 'renameSync'
  | 'statSync'
  | 'unlinkSync'
  | 'writeSync'
>;

/** The directory, held by this process until `release()`. */
export interface DirectoryLock {
  readonly dir: string;
  /** The PGlite instance that has the directory open in this process (the CLI attaches it once made). */
  attach(instance: object): void;
  /** Gives the directory back; calling it again is harmless. */
  release(): void;
}

interface Held {
  instance: object | undefined;
  release(): void;
}

interface Registry {
  held: Map<string, Held>;
  exitHook: boolean;
}

/** One registry per process, whichever copy of this module (ESM, CJS, the CLI's bundle) asks. */
function registry(): Registry {
  const key = Symbol.for('rack-webhooks.pglite-locks');
  const scope = globalThis as unknown as Record<symbol, Registry | undefined>;
  return (scope[key] ??= { held: new Map(), exitHook: false });
}

type Process = { pid: number; argv: string[]; kill(pid: number, signal: number): void; on(event: 'exit', fn: () => void): void };
const host = (): Process => (globalThis as unknown as { process: Process }).process;

const code = (error: unknown): string | undefined => (error as { code?: string } | null)?.code;

/** Which process holds a lock file, as far as it can be read; undefined when the file is gone. */
interface Holder {
  pid: number | undefined;
  ino: number;
  mtimeMs: number;
}

function readHolder(fs: LockFs, path: string): Holder | undefined {
  try {
    const stat = fs.statSync(path);
    const text = fs.readFileSync(path, 'utf8').trim();
    const pid = /^\d{1,10}$/.test(text) ? Number(text) : undefined;
    return { pid: pid !== undefined && pid > 0 ? pid : undefined, ino: stat.ino, mtimeMs: stat.mtimeMs };
  } catch (error) {
    if (code(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** When `pid` started, in ms since the epoch, from /proc (Linux); undefined where that cannot be read or trusted. */
function startedAtMs(fs: LockFs, pid: number): number | undefined {
  try {
    const ticksOf = (id: number | 'self') => {
      const stat = fs.readFileSync(`/proc/${id}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]); // field 22, starttime
    };
    const uptimeMs = Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000;
    const bootMs = Date.now() - uptimeMs;
    // Clock ticks are 100 a second on every mainstream Linux; checked on this process, whose start Node knows.
    const selfStartMs = Date.now() - (globalThis as unknown as { process: { uptime(): number } }).process.uptime() * 1000;
    if (Math.abs(bootMs + ticksOf('self') * 10 - selfStartMs) > 1500) return undefined;
    const ticks = ticksOf(pid);
    return Number.isFinite(ticks) ? bootMs + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(fs: LockFs, holder: Holder): boolean {
  if (holder.pid === undefined) return Date.now() - holder.mtimeMs < 5_000; // being written by an older version: give it time
  // This pid, yet not in this process's registry: left by an earlier process that had the same pid (a container's pid 1).
  if (holder.pid === host().pid) return false;
  try {
    host().kill(holder.pid, 0);
  } catch (error) {
    if (code(error) !== 'EPERM') return false; // EPERM: alive, someone else's
  }
  const started = startedAtMs(fs, holder.pid);
  // Started after the lock was written: the pid was handed to a new process, the holder is gone.
  return started === undefined || started <= holder.mtimeMs + 2_000;
}

/**
 * The holder's command, as far as it is safe to show: the program, its script, and words after it
 * that read as subcommands (`node cli.js console`). No options and no other arguments: they may
 * hold a key or a database password.
 */
function commandOf(fs: LockFs, pid: number): string | undefined {
  let words: string[];
  try {
    words = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return undefined;
  }
  const base = (word: string) =>
    word
      .slice(word.lastIndexOf('/') + 1)
      .replace(/[^\x20-\x7e]/g, '?')
      .slice(0, 60);
  const shown = words.length > 0 ? [base(words[0]!)] : [];
  let rest = words.slice(1);
  while (rest[0]?.startsWith('-') === true && rest[0].includes('=')) rest = rest.slice(1); // node --env-file=.env app.js
  if (rest[0] !== undefined && !rest[0].startsWith('-')) {
    shown.push(base(rest[0]));
    for (const word of rest.slice(1, 3)) {
      if (!/^[a-z][a-z-]{0,15}$/.test(word)) break;
      shown.push(word);
    }
  }
  return shown.length > 0 ? shown.join(' ') : undefined;
}

/** What to do when another process holds the directory, as the one-line error says it. */
export type LockRemedy = string;

export function heldError(fs: LockFs, shown: string, pid: number | undefined, remedy: LockRemedy): Error {
  const command = pid === undefined ? undefined : commandOf(fs, pid);
  const who = pid === undefined ? 'another process' : `another process (pid ${pid}${command === undefined ? '' : `: ${command}`})`;
  return new Error(`the PGlite database in ${shown} is open in ${who}; PGlite serves one process at a time: ${remedy}`);
}

function createLockFile(fs: LockFs, path: string): boolean {
  const content = `${host().pid}\n`;
  const aside = `${path}.${host().pid}.${Math.random().toString(36).slice(2, 10)}`;
  const fd = fs.openSync(aside, 'wx');
  try {
    fs.writeSync(fd, content);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(aside, path);
    return true;
  } catch (error) {
    if (code(error) === 'EEXIST') return false;
    // A file system without hard links: created in place, as before.
    const fallback = fs.openSync(path, 'wx');
    try {
      fs.writeSync(fallback, content);
    } finally {
      fs.closeSync(fallback);
    }
    return true;
  } finally {
    fs.unlinkSync(aside);
  }
}

/** Waits `ms` without giving the event loop back: the lock is taken synchronously, and the wait is a few ms. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Takes the take-over guard, a second lock file held only while a stale lock is removed, or says
 * another process holds it. A guard left by a process killed in those few microseconds is removed
 * once its process is gone: renamed away first, and put back when what was renamed is not the
 * guard judged (another process replaced it meanwhile).
 */
function takeGuard(fs: LockFs, guard: string): boolean {
  if (createLockFile(fs, guard)) return true;
  const holder = readHolder(fs, guard);
  if (holder === undefined || holder.pid === undefined || isAlive(fs, holder) || Date.now() - holder.mtimeMs < 2_000) return false;
  const tomb = `${guard}.stale.${host().pid}.${Math.random().toString(36).slice(2, 10)}`;
  try {
    fs.renameSync(guard, tomb);
  } catch (error) {
    if (code(error) === 'ENOENT') return false;
    throw error;
  }
  if (readHolder(fs, tomb)?.pid !== holder.pid) {
    try {
      fs.linkSync(tomb, guard);
    } catch {
      // its holder finished meanwhile
    }
  }
  fs.unlinkSync(tomb);
  return false; // look again, with the guard free
}

/**
 * Removes the stale lock judged, and only it. Under the guard nothing else removes a lock, and a
 * new one cannot be linked while the stale one is there, so the lock read under the guard stays
 * put until it is removed. Judged again under the guard: another process may have taken the stale
 * lock over and linked its own before this one got the guard (with the same inode, even, as file
 * systems reuse them), which its pid tells apart.
 */
function takeOver(fs: LockFs, path: string, stale: Holder): boolean {
  const guard = `${path}.takeover`;
  if (!takeGuard(fs, guard)) return false;
  try {
    const now = readHolder(fs, path);
    if (now !== undefined && now.ino === stale.ino && now.pid === stale.pid && !isAlive(fs, now)) fs.unlinkSync(path);
    return true;
  } finally {
    fs.unlinkSync(guard);
  }
}

/**
 * Takes the directory's lock for this process, or throws the one-line error that says who holds
 * it and `remedy`. `dir` must exist.
 */
export function lockDirectory(fs: LockFs, dir: string, shown: string, remedy: LockRemedy): DirectoryLock {
  const key = fs.realpathSync(dir);
  const { held } = registry();
  if (held.has(key)) {
    throw new Error(
      `the PGlite database in ${shown} is already open in this process, through another PGlite instance: each instance keeps its own copy, ` +
        'so pass the same instance to every createInbox (or close the first one)',
    );
  }
  const path = `${key}/${LOCK_FILE}`;
  let taken = false;
  for (let attempt = 0; attempt < 200 && !taken; attempt++) {
    try {
      taken = createLockFile(fs, path);
    } catch (error) {
      throw new Error(`cannot lock the PGlite directory ${shown} (${code(error) ?? 'error'})`, { cause: error });
    }
    if (taken) break;
    const holder = readHolder(fs, path);
    if (holder === undefined) continue; // released meanwhile
    if (isAlive(fs, holder)) throw heldError(fs, shown, holder.pid, remedy);
    if (!takeOver(fs, path, holder)) pause(1 + (attempt % 10)); // another process is taking it over
  }
  if (!taken) throw new Error(`cannot lock the PGlite directory ${shown}: other processes keep taking it`);
  const ino = fs.statSync(path).ino;
  const entry: Held = {
    instance: undefined,
    release() {
      if (held.get(key) !== entry) return;
      held.delete(key);
      try {
        if (fs.statSync(path).ino === ino) fs.unlinkSync(path); // still ours
      } catch {
        // gone already
      }
    },
  };
  held.set(key, entry);
  installExitHook();
  return {
    dir: key,
    attach: (instance) => void (entry.instance = instance),
    release: () => entry.release(),
  };
}

/** The directory a PGlite `dataDir` keeps its files in; undefined for memory, IndexedDB and OPFS. */
export function fileSystemDir(dataDir: unknown): string | undefined {
  if (typeof dataDir !== 'string' || dataDir === '') return undefined;
  if (dataDir.startsWith('file://')) return dataDir.slice('file://'.length) || undefined;
  return /^(memory|idb|opfs-ahp|memfs2opfs):\/\//.test(dataDir) ? undefined : dataDir;
}

interface PGliteInstance {
  readonly dataDir?: string;
  readonly closed?: boolean;
  close?(): Promise<void>;
}

const APP_REMEDY =
  'stop it first (a CLI command or the console lets go when it ends), or use PostgreSQL to share an inbox between processes';

/**
 * `createInbox` on a PGlite instance whose data is in a directory: this process holds the
 * directory until the instance is closed (or the process exits). Nothing when this instance holds
 * it already (the CLI locks before it opens PGlite); the one-line error when another process does.
 */
export function holdPGliteDirectory(fs: LockFs, instance: PGliteInstance): void {
  const dir = fileSystemDir(instance.dataDir);
  if (dir === undefined || instance.closed === true) return;
  fs.mkdirSync(dir, { recursive: true }); // PGlite creates it as it starts, which may not have happened yet
  const entry = registry().held.get(fs.realpathSync(dir));
  if (entry !== undefined && entry.instance === instance) return;
  const lock = lockDirectory(fs, dir, dir, APP_REMEDY);
  lock.attach(instance);
  const close = instance.close;
  if (typeof close !== 'function') return; // held until the process exits
  // Released once PGlite has closed (its files are then consistent on disk), whether or not closing threw.
  Object.defineProperty(instance, 'close', {
    configurable: true,
    writable: true,
    value: async function closeAndRelease(this: PGliteInstance): Promise<void> {
      try {
        await close.call(instance);
      } finally {
        lock.release();
      }
    },
  });
}

/** On a normal exit the locks go with the process; a killed one leaves them, and they are taken over as stale. */
function installExitHook(): void {
  const state = registry();
  if (state.exitHook) return;
  state.exitHook = true;
  host().on('exit', () => {
    for (const entry of [...state.held.values()]) entry.release();
  });
}
