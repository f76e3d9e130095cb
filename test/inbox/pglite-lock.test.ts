import * as fs from 'node:fs';
import { mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LOCK_FILE, lockDirectory } from '../../src/inbox/database/pglite-lock.js';

// The races between processes are in test/cli/pglite-owner.test.ts; these are the files a killed
// process can leave behind, in one process on the real file system.
const goneProcessPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);

const freshDir = () => mkdtempSync(join(tmpdir(), 'rack-webhooks-lock-'));
const aged = (path: string, seconds: number) => {
  const then = new Date(Date.now() - seconds * 1000);
  utimesSync(path, then, then);
};

describe('the PGlite directory lock', () => {
  it('takes over a lock left by a killed process, and leaves no other file behind', () => {
    const dir = freshDir();
    writeFileSync(join(dir, LOCK_FILE), `${goneProcessPid()}\n`);
    const lock = lockDirectory(fs, dir, dir, 'stop it');
    expect(fs.readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a take-over guard left by a process killed while it held it is removed once old, and the stale lock is taken', () => {
    const dir = freshDir();
    writeFileSync(join(dir, LOCK_FILE), `${goneProcessPid()}\n`);
    const guard = join(dir, `${LOCK_FILE}.takeover`);
    writeFileSync(guard, `${goneProcessPid()}\n`);
    aged(guard, 10);
    const lock = lockDirectory(fs, dir, dir, 'stop it');
    expect(fs.readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    lock.release();
  });

  it('a guard held by a live process keeps a stale lock in place: the lock is not taken, with a clear error', () => {
    const dir = freshDir();
    writeFileSync(join(dir, LOCK_FILE), `${goneProcessPid()}\n`);
    const guard = join(dir, `${LOCK_FILE}.takeover`);
    writeFileSync(guard, `${process.ppid}\n`); // a live process that started before the file
    expect(() => lockDirectory(fs, dir, dir, 'stop it')).toThrow(`cannot lock the PGlite directory ${dir}: other processes keep taking it`);
    expect(readdirSync(dir).sort()).toEqual([LOCK_FILE, `${LOCK_FILE}.takeover`]);
  });
});
