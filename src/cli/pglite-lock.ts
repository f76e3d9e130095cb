/**
 * PGlite is PostgreSQL inside one process: two processes opening the same directory (a `listen
 * --inbox ./dir` and an `inbox list --database ./dir`) would each write it and corrupt it, and
 * PGlite itself does not stop them. The CLI keeps a lock file in the directory while it has it
 * open; a lock whose process is gone is taken over.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = '.rack-webhooks.lock';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM'; // alive, someone else's
  }
}

function holder(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the directory's lock; resolves with the function that gives it back. */
export function lockPGliteDirectory(dir: string, shown: string): () => void {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== 'EEXIST') throw new Error(`cannot lock the PGlite directory ${shown} (${code ?? 'error'})`, { cause: error });
      const pid = holder(path);
      if (pid !== undefined && isRunning(pid)) {
        throw new Error(
          `the PGlite database in ${shown} is open in another process (pid ${pid}): PGlite serves one process at a time; stop that one first, or use PostgreSQL to share an inbox`,
          { cause: error },
        );
      }
      rmSync(path, { force: true }); // its process is gone (killed): the lock is stale
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    return () => rmSync(path, { force: true });
  }
  throw new Error(`cannot lock the PGlite directory ${shown}: another process keeps taking it`);
}
