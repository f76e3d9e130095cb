/**
 * A PGlite directory is its owner's user's alone, and what its owner acknowledged is on disk
 * (issue 38, point 4): PGlite wrote its files 0666 whatever the umask, its socket took any local
 * user's statements as a superuser's, and it ran with fsync off (0 fsync calls for 50 deliveries).
 * Real processes: an owner under umask 000, another local user (`nobody`), and an app counting
 * the fsync calls its process makes. The children import the built package (npx tsup first).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPGlite } from '../../../src/database/owner/open.js';
import { pgliteDirectory } from '../../kit/pglite-directory.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => fs.rm(dir, { recursive: true, force: true }))), 60_000);

/** A directory holding a PGlite database, under a parent every user can traverse (as /srv or /home/app would be). */
function newDatabaseDir(): string {
  const parent = mkdtempSync(join(tmpdir(), 'rwt-private-'));
  chmodSync(parent, 0o755);
  made.push(parent);
  return pgliteDirectory(join(parent, 'db'));
}

/** Every path under `dir` with its permission bits, `dir` itself as '.'. */
function modes(dir: string): Map<string, number> {
  const entries = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  return new Map(['.', ...entries].map((name) => [name, statSync(join(dir, name)).mode & 0o777]));
}

/** Runs `script` (ES module) as a child node process, under `umask`; resolves with its first stdout line and a way to end it. */
function startNode(script: string, umask: string) {
  const child = spawn('sh', ['-c', `umask ${umask} && exec "$0" --input-type=module -e "$1"`, process.execPath, script], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const line = new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('\n')) resolve(stdout.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`the child exited (${code}) before answering: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { line, stop: () => (child.stdin.end(), exited) };
}

/** What `nobody` gets trying the socket and a data file: 'connected' / 'read' or the error's code. */
function asNobody(socket: string, file: string): { connect: string; read: string } {
  const script = `
    const net = require('node:net'); const fs = require('node:fs');
    let read; try { fs.readFileSync(${JSON.stringify(file)}); read = 'read'; } catch (error) { read = error.code; }
    const socket = net.connect(${JSON.stringify(socket)});
    socket.once('connect', () => { console.log(JSON.stringify({ connect: 'connected', read })); socket.destroy(); });
    socket.once('error', (error) => console.log(JSON.stringify({ connect: error.code, read })));`;
  const result = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '-e', script], {
    encoding: 'utf8',
  });
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout) as { connect: string; read: string };
}

describe('a PGlite directory is its owner’s user’s alone', () => {
  it('an owner under umask 000: the directory 0700, every file 0600 (those PGlite makes later too), the socket 0600; another local user can neither connect nor read', async () => {
    const dir = newDatabaseDir();
    const owner = startNode(
      `const { openPGlite, createInbox } = await import(${JSON.stringify(`${ROOT}dist/inbox.js`)});
       const database = await openPGlite(${JSON.stringify(dir)});
       await createInbox({ database, table: 'deliveries' }).migrate(); // new tables: new files
       console.log(database.role);
       process.stdin.resume(); process.stdin.once('end', async () => { await database.close(); process.exit(0); });`,
      '000',
    );
    expect(await owner.line).toBe('owner');
    const found = modes(dir);
    const socket = [...found.keys()].find((name) => /^\.s\.PGSQL\.\d+$/.test(name))!;
    expect(socket).toBeDefined();
    const loose = [...found].filter(([name, mode]) => (statSync(join(dir, name)).isDirectory() ? mode !== 0o700 : mode !== 0o600));
    expect(loose.map(([name, mode]) => `${name} ${mode.toString(8)}`)).toEqual([]);
    // Even were the directory opened up again, the socket and files are the owner's alone.
    chmodSync(dir, 0o755);
    expect(asNobody(join(dir, socket), join(dir, 'PG_VERSION'))).toEqual({ connect: 'EACCES', read: 'EACCES' });
    chmodSync(dir, 0o700);
    expect(await owner.stop()).toBe(0);
  }, 120_000);

  it('a directory other users can write is refused in one line that says how to fix it; one they can read (as earlier versions left it) is made private on open', async () => {
    const dir = newDatabaseDir();
    chmodSync(dir, 0o777);
    await expect(openPGlite(dir)).rejects.toThrow(
      `the PGlite directory ${dir} can be written by other users (mode 0777): any of them could replace its files or its owner's socket; make it its owner's alone (chmod 0700 ${dir}), then try again`,
    );
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'left-by-an-earlier-version'), '', { mode: 0o666 });
    chmodSync(join(dir, 'left-by-an-earlier-version'), 0o666);
    chmodSync(join(dir, 'base'), 0o755);
    const owner = await openPGlite(dir);
    expect(owner.role).toBe('owner');
    const found = modes(dir);
    expect([found.get('.'), found.get('base'), found.get('left-by-an-earlier-version'), found.get('PG_VERSION')]).toEqual([
      0o700, 0o700, 0o600, 0o600,
    ]);
    await owner.close();
  }, 60_000);
});

describe('what the owner acknowledged is on disk', () => {
  it('each delivery answered is fsynced before its answer: at least one fsync(2) per acknowledged delivery', async () => {
    const dir = newDatabaseDir();
    // Node's fsyncSync, counted: PGlite's file system reaches the disk through it.
    const app = startNode(
      `import { createRequire, syncBuiltinESMExports } from 'node:module';
       const fs = createRequire(import.meta.url)('node:fs');
       const fsyncSync = fs.fsyncSync; let calls = 0;
       fs.fsyncSync = (fd) => { calls += 1; return fsyncSync(fd); };
       syncBuiltinESMExports();
       const { openPGlite, createInbox } = await import(${JSON.stringify(`${ROOT}dist/inbox.js`)});
       const { createReceiver } = await import(${JSON.stringify(`${ROOT}dist/index.js`)});
       const { createSignedRequestSync } = await import(${JSON.stringify(`${ROOT}dist/testing.js`)});
       const database = await openPGlite(${JSON.stringify(dir)});
       const inbox = createInbox({ database, table: 'deliveries' });
       await inbox.migrate();
       const receiver = createReceiver({ secrets: 'k', inbox });
       const before = calls; const outcomes = [];
       for (let i = 0; i < 20; i++) {
         const body = JSON.stringify({ action: 'app:create', status: 'success', timestamp: '2026-01-01T00:00:' + String(i).padStart(2, '0') + 'Z', data: { name: 'a' + i, rack: 'r', actor: 'x' } });
         const request = createSignedRequestSync(body, { secrets: 'k' });
         outcomes.push((await receiver.receive({ body: request.bytes, headers: request.headers })).outcome);
       }
       const settings = (await database.client.query("SELECT current_setting('fsync') AS fsync, current_setting('wal_sync_method') AS method")).rows[0];
       console.log(JSON.stringify({ fsyncs: calls - before, outcomes: [...new Set(outcomes)], ...settings }));
       await database.close(); process.exit(0);`,
      '022',
    );
    const answer = JSON.parse(await app.line) as { fsyncs: number; outcomes: string[]; fsync: string; method: string };
    expect(answer).toMatchObject({ outcomes: ['accepted'], fsync: 'on', method: 'fsync' });
    expect(answer.fsyncs).toBeGreaterThanOrEqual(20);
    await app.stop();
  }, 120_000);
});
