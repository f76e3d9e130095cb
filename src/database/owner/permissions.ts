/**
 * A PGlite directory is its owner's user's alone, as PostgreSQL demands of a data directory: the
 * directory 0700, its files 0600. PGlite's file system writes files 0666 whatever the umask (so
 * another local user could overwrite one), and its owner's socket would take any local user's
 * statements as a superuser's (one inserted an unsigned event that the owner's worker ran).
 *
 * A directory other users can write is refused, not fixed: any of them may already have put a
 * socket or a file of theirs in it, which chmod would not take out. One they can only read is
 * made private (its files too) by the owner before PGlite opens it: directories made by earlier
 * versions were 0755, and PostgreSQL's own refusal would stop every app that upgrades.
 */
import type * as NodeFs from 'node:fs/promises';

/** The process's user; undefined outside POSIX systems, where nothing is checked. */
const processUid = () => (globalThis as { process?: { getuid?: () => number } }).process?.getuid?.();

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/**
 * Refuses a directory other users can write (owner and guests alike: a guest must not trust a
 * socket someone else may have put there), and one the owner's process does not own. Then makes the
 * directory itself its user's alone, before any socket is made in it (a socket is reachable from
 * the moment it listens, before a chmod): by whichever process owns the directory's files.
 */
export async function checkDirectory(fs: typeof NodeFs, dir: string, role: 'owner' | 'any'): Promise<void> {
  const uid = processUid();
  if (uid === undefined) return;
  const stat = await fs.stat(dir);
  if ((stat.mode & 0o022) !== 0) {
    throw new Error(
      `the PGlite directory ${dir} can be written by other users (mode ${octal(stat.mode)}): any of them could replace its files or its owner's socket; ` +
        `make it its owner's alone (chmod 0700 ${dir}), then try again`,
    );
  }
  if (role === 'owner' && stat.uid !== uid && uid !== 0) {
    throw new Error(
      `the PGlite directory ${dir} belongs to the user with uid ${stat.uid}, not to this process's (uid ${uid}): ` +
        'open it as the user that owns it, as PostgreSQL requires of its data directory',
    );
  }
  if (stat.uid === uid && (stat.mode & 0o077) !== 0) await fs.chmod(dir, stat.mode & 0o700);
}

/** Takes group and other users' bits off the directory and everything in it (PGlite's files 0666 become 0600, directories 0700). */
export async function makePrivate(fs: typeof NodeFs, dir: string): Promise<void> {
  if (processUid() === undefined) return;
  const pending = [dir];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    const stat = await fs.lstat(path);
    if (stat.isSymbolicLink()) continue;
    if ((stat.mode & 0o077) !== 0) await fs.chmod(path, stat.mode & 0o700);
    if (stat.isDirectory()) for (const name of await fs.readdir(path)) pending.push(`${path}/${name}`);
  }
}
