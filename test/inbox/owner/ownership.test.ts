/**
 * One owner per PGlite directory, proven by its socket: claims racing in one process, threads,
 * a clock that jumps, a guest that never opens the files, the owner's session shared without
 * interleaving, and the deprecated `new PGlite(dir)` path. Processes and namespaces are in
 * test/cli/pglite-owner.test.ts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { createConnection } from 'node:net';
import * as fs from 'node:fs/promises';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createInbox } from '../../../src/inbox/create-inbox.js';
import { claimDirectory, probe, socketPath, type Claim } from '../../../src/database/owner/claim.js';
import { openPGlite, type PGliteDirectory } from '../../../src/database/owner/open.js';
import { query } from '../../../src/database/owner/wire.js';
import { pgliteDirectory } from '../../kit/pglite-directory.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const made: string[] = [];
// Eight PGlite directories: more than the default 10 s to remove on a loaded machine.
afterAll(() => Promise.all(made.map((dir) => fs.rm(dir, { recursive: true, force: true }))), 60_000);

/** A directory path of its own; `database`: holding a new PGlite database (the run's template), not yet created. */
function newDir({ database = false } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'rwt-own-'));
  made.push(dir);
  return database ? pgliteDirectory(join(dir, 'db')) : join(dir, 'db');
}

function runNode(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

const sockets = (dir: string) => readdirSync(dir).filter((name) => /^\.s\.PGSQL\.\d+$/.test(name));
const count = async (client: unknown) =>
  (await (client as { query(text: string): Promise<{ rows: { n: number }[] }> }).query('SELECT count(*)::int AS n FROM t')).rows[0]!.n;

describe('who owns a PGlite directory', () => {
  it('eight claims racing in one process: exactly one owns it, the rest find it; once it lets go, the next claim owns it', async () => {
    const dir = newDir();
    mkdirSync(dir, { recursive: true });
    const claims = await Promise.all(Array.from({ length: 8 }, () => claimDirectory({ fs, net }, dir)));
    const owners = claims.filter((claim): claim is Claim & { role: 'owner' } => claim.role === 'owner');
    expect(owners).toHaveLength(1);
    expect(claims.filter((claim) => claim.role === 'guest').map((claim) => claim.generation)).toEqual(Array(7).fill(owners[0]!.generation));
    expect(sockets(dir)).toEqual([`.s.PGSQL.${owners[0]!.generation}`]);
    await owners[0]!.release();
    expect(sockets(dir)).toEqual([]);
    const next = await claimDirectory({ fs, net }, dir);
    expect(next.role).toBe('owner');
    if (next.role === 'owner') await next.release();
  });

  it('a socket left by a killed owner refuses connections: it is taken over, with the next generation, and removed', async () => {
    const dir = newDir();
    mkdirSync(dir, { recursive: true });
    const stale = socketPath(dir, 41);
    const killed = spawnSync(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(stale)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    expect(killed.signal).toBe('SIGKILL');
    expect(await probe({ fs, net }, stale)).toBe('gone');
    const claim = await claimDirectory({ fs, net }, dir);
    expect(claim).toMatchObject({ role: 'owner', generation: 42 });
    expect(sockets(dir)).toEqual(['.s.PGSQL.42']);
    if (claim.role === 'owner') await claim.release();
  });

  it('an owner that accepts and does not serve is not taken over: openPGlite refuses in one line that says what to do', async () => {
    const dir = newDir();
    mkdirSync(dir, { recursive: true });
    const stuck = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => stuck.listen(socketPath(dir, 3), resolve));
    try {
      await expect(openPGlite(dir)).rejects.toThrow(
        new RegExp(
          `^pglite_owner_unreachable: the PGlite directory ${dir} is owned by a live process that has not answered: ` +
            `its owner \\(pid unknown\\) accepts connections on ${socketPath(dir, 3)} and answers nothing .*resume that process or stop it`,
        ),
      );
      expect(sockets(dir)).toEqual(['.s.PGSQL.3']); // a live listener is never removed
    } finally {
      await new Promise((resolve) => stuck.close(resolve));
    }
  });

  it('a directory path too long for a Unix socket is refused in one line', async () => {
    const dir = join(tmpdir(), 'x'.repeat(120));
    await expect(claimDirectory({ fs, net }, dir)).rejects.toThrow(
      /^the PGlite directory path .* is too long for its owner's socket \(at most 83 bytes\): use a shorter path$/,
    );
  });
});

describe('openPGlite', () => {
  it('a guest in another thread reaches the owner’s database: its writes are the owner’s, its transaction never interleaves with the owner’s', async () => {
    const dir = newDir({ database: true });
    const owner = await openPGlite(dir);
    expect(owner.role).toBe('owner');
    const db = owner.client as PGlite;
    await db.exec('CREATE TABLE t (id serial PRIMARY KEY, v text)');
    // The built package, as a user's thread would load it.
    const thread = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const { openPGlite } = require(workerData.root + 'dist/inbox.cjs');
       (async () => {
         const guest = await openPGlite(workerData.dir);
         const client = await guest.client.connect();
         await client.query('BEGIN');
         await client.query("INSERT INTO t (v) VALUES ('from the thread')");
         parentPort.postMessage({ role: guest.role, inTransaction: true });
         // 'query': a statement inside the open transaction; 'commit' ends it.
         for (;;) {
           const message = await new Promise((resolve) => parentPort.once('message', resolve));
           if (message === 'commit') break;
           const { rows } = await client.query('SELECT count(*)::int AS n FROM t');
           parentPort.postMessage({ seenInTransaction: rows[0].n });
         }
         await client.query('COMMIT');
         client.release();
         await guest.close();
         parentPort.postMessage({ done: true });
       })().catch((error) => parentPort.postMessage({ error: String(error) }));`,
      { eval: true, workerData: { root: ROOT, dir } },
    );
    const messages: Record<string, unknown>[] = [];
    const next = () =>
      new Promise<Record<string, unknown>>((resolve) => thread.once('message', (m: Record<string, unknown>) => resolve(m)));
    messages.push(await next());
    expect(messages[0]).toEqual({ role: 'guest', inTransaction: true });
    // The thread's transaction is open: the owner's statement waits for it rather than running inside it.
    let ownerDone = false;
    const ownerCount = count(db).then((n) => ((ownerDone = true), n));
    // A statement the guest sends after the owner's is answered, in the guest's transaction (its own
    // row seen): the owner's, sent first, still waits.
    const answered = next();
    thread.postMessage('query');
    expect(await answered).toEqual({ seenInTransaction: 1 });
    expect(ownerDone).toBe(false);
    const finished = next();
    thread.postMessage('commit');
    expect(await finished).toEqual({ done: true });
    expect(await ownerCount).toBe(1);
    await thread.terminate();
    await owner.close();
    expect(sockets(dir)).toEqual([]);
  }, 60_000);

  it('a guest never opens the directory’s files, and a clock step or an old socket time does not make a live owner stale', async () => {
    const dir = newDir({ database: true });
    const owner = await openPGlite(dir);
    await (owner.client as PGlite).exec('CREATE TABLE t (id serial PRIMARY KEY, v text); INSERT INTO t (v) VALUES (1), (2)');
    await (owner.client as PGlite).exec('CHECKPOINT');
    const files = () =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((name) => !name.startsWith('.s.'))
        .map((name) => {
          const stat = statSync(join(dir, name));
          return `${name} ${stat.size} ${stat.mtimeMs}`;
        })
        .sort();
    const before = files();
    const epoch = new Date(0);
    utimesSync(join(dir, sockets(dir)[0]!), epoch, epoch);
    // Another process whose clock is ten days ahead.
    const script = `
      const shifted = Date.now() + 10 * 86400000; const RealDate = Date;
      globalThis.Date = class extends RealDate { constructor(...a) { super(...(a.length ? a : [shifted])); } static now() { return shifted; } };
      const { openPGlite } = await import(${JSON.stringify(`${ROOT}dist/inbox.js`)});
      const guest = await openPGlite(${JSON.stringify(dir)});
      const { rows } = await guest.client.query('SELECT count(*)::int AS n FROM t');
      console.log(JSON.stringify({ role: guest.role, n: rows[0].n, year: new Date().getUTCFullYear() }));
      await guest.close();`;
    // Not spawnSync: this process is the owner, and must go on serving while the child asks.
    const child = await runNode(['--input-type=module', '-e', script]);
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toMatchObject({ role: 'guest', n: 2 });
    expect(files()).toEqual(before);
    expect(await count(owner.client)).toBe(2);
    await owner.close();
  }, 60_000);

  it('an owner that never calls close() still lets its process exit, and the next caller owns the directory', async () => {
    const dir = newDir({ database: true });
    const script = `
      const { openPGlite } = await import(${JSON.stringify(`${ROOT}dist/inbox.js`)});
      const owner = await openPGlite(${JSON.stringify(dir)});
      await owner.client.query('SELECT 1');
      console.log(owner.role);`;
    const exited = await runNode(['--input-type=module', '-e', script]);
    expect(exited).toEqual({ code: 0, stdout: 'owner\n', stderr: '' });
    expect(sockets(dir)).toHaveLength(1); // left behind, refusing connections
    const next = await openPGlite(dir);
    expect(next.role).toBe('owner');
    await next.close();
    expect(sockets(dir)).toEqual([]);
  }, 60_000);

  it('a guest that goes away mid-transaction is rolled back; one that asks to LISTEN is told to poll; the session goes on', async () => {
    const dir = newDir({ database: true });
    const owner = await openPGlite(dir);
    const db = owner.client as PGlite;
    await db.exec('CREATE TABLE t (id serial PRIMARY KEY, v text)');
    const guest = await openPGlite(dir);
    const pool = guest.client as pg.Pool;
    await expect(pool.query('LISTEN anything')).rejects.toMatchObject({
      code: '0A000',
      message: 'LISTEN is not served to guests of a PGlite directory: poll instead',
    });
    // A raw guest: starts a transaction, writes, and drops the connection.
    const socket = createConnection(socketPath(dir, 1));
    await new Promise((resolve) => socket.once('connect', resolve));
    const startup = new Uint8Array([0, 0, 0, 8, 0, 3, 0, 0]);
    socket.write(startup);
    socket.write(query("BEGIN; INSERT INTO t (v) VALUES ('never committed')"));
    await new Promise<void>((resolve) => {
      let seen = '';
      socket.on('data', (chunk: Buffer) => {
        seen += chunk.toString('latin1');
        if (seen.split('Z\u0000\u0000\u0000\u0005').length >= 3) resolve(); // ready after startup, then after the statements
      });
    });
    socket.destroy();
    expect(await count(db)).toBe(0);
    expect((await db.query<{ s: string }>("SELECT current_setting('transaction_isolation') AS s")).rows).toHaveLength(1);
    await pool.query("INSERT INTO t (v) VALUES ('committed')");
    expect(await count(db)).toBe(1);
    await guest.close();
    await owner.close();
  }, 60_000);

  it('createInbox takes it; a NOTIFY raised through a guest reaches the owner’s listeners', async () => {
    const dir = newDir({ database: true });
    const owner: PGliteDirectory = await openPGlite(dir);
    const inbox = createInbox({ database: owner });
    await inbox.migrate();
    const heard: string[] = [];
    await (owner.client as PGlite).listen('rwt_channel', (payload) => heard.push(payload));
    const guest = await openPGlite(dir);
    const guestInbox = createInbox({ database: guest });
    expect(await guestInbox.stats()).toMatchObject({ total: 0 });
    await (guest.client as pg.Pool).query("SELECT pg_notify('rwt_channel', 'from a guest')");
    await expect.poll(() => heard, { timeout: 5_000 }).toEqual(['from a guest']);
    await guest.close();
    await owner.close();
  }, 60_000);
});

describe('createInbox({ database: new PGlite(dir) }), deprecated', () => {
  it('warns once; owns the directory when it is free (serving it); when another owns it, every statement is refused in one line', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const dir = newDir({ database: true });
      const legacy = new PGlite(dir);
      const inbox = createInbox({ database: legacy });
      await inbox.migrate();
      // The same instance given to a second inbox (another table) is the same owner, not a rival.
      await createInbox({ database: legacy, table: 'another_inbox' }).migrate();
      expect(sockets(dir)).toEqual(['.s.PGSQL.1']);
      const guest = await openPGlite(dir);
      expect(guest.role).toBe('guest');
      expect(await createInbox({ database: guest }).stats()).toMatchObject({ total: 0 });
      await guest.close();
      await legacy.close();
      expect(sockets(dir)).toEqual([]);

      const owner = await openPGlite(dir);
      const second = new PGlite(pgliteDirectory(join(dir, '..', 'elsewhere'))); // a directory of its own: fine
      await createInbox({ database: second }).migrate();
      await second.close();
      const opened = () => Promise.reject(new Error('opened'));
      const intruder = { dataDir: dir, query: opened, exec: opened, transaction: opened, listen: opened, close: async () => {} };
      const refused = createInbox({ database: intruder as unknown as PGlite });
      await expect(refused.stats()).rejects.toMatchObject({
        code: 'inbox_unavailable',
        message: `createInbox: the PGlite database in ${dir} is owned by another process or thread; pass createInbox({ database: await openPGlite(dir) }) to reach it through its owner, instead of a PGlite instance of your own`,
      });
      await owner.close();
      expect(warnings.filter((warning) => (warning as { code?: string }).code === 'RACK_WEBHOOKS_PGLITE_INSTANCE')).toHaveLength(1);
      // Data in memory has no directory: no claim, no warning.
      const memory = new PGlite();
      await createInbox({ database: memory }).migrate();
      await memory.close();
    } finally {
      process.off('warning', onWarning);
    }
  }, 90_000);
});
