/**
 * A PGlite directory belongs to the one process that has it open. PGlite is PostgreSQL inside one
 * process: a second process opening the same directory keeps its own view, so a `retry` it
 * reports done is lost when the app stops, and a `list` misses what the app accepted. Here an
 * app (test/inbox/fixtures/pglite-app.mjs, opening `new PGlite(dir)` itself as the README shows)
 * and the built CLI run as real processes. The children import the built package (npx tsup first).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createInbox } from '../../src/inbox.js';
import { LOCK_FILE } from '../../src/inbox/database/pglite-lock.js';
import { WebhookInboxError } from '../../src/inbox/errors.js';
import { createSignedRequestSync } from '../../src/testing/signed-request.js';
import { killAllChildren, killChild, startChild, waitFor, type Child } from '../inbox/fixtures/children.js';
import { killChildren, removeTempDirs, run, tempDir } from './helpers.js';
import { BODIES, KEY, captureOutput, cli } from './inbox-helpers.js';

captureOutput();
afterEach(async () => {
  killChildren();
  await killAllChildren();
});
afterAll(removeTempDirs);

const CLI_REMEDY =
  'PGlite serves one process at a time: stop that process first, run the operation inside it (inbox.list(), inbox.retry(), inbox.replay()), ' +
  'or use PostgreSQL to share an inbox between processes';

/** The one line a command prints when `pid` holds the directory. */
function heldBy(command: string, dir: string, pid: number, what: string): string {
  return `rack-webhooks ${command}: the PGlite database in ${dir} is open in another process (pid ${pid}: ${what}); ${CLI_REMEDY}\n`;
}

async function post(port: number, body: string): Promise<{ status: number; text: string }> {
  const request = createSignedRequestSync(body, { secrets: KEY });
  const response = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers: request.headers, body: request.body });
  return { status: response.status, text: await response.text() };
}

/** `inbox list` as [id, state, attempts] rows. */
function listed(out: string): string[][] {
  return out
    .split('\n')
    .slice(1)
    .filter((line) => /^\d/.test(line))
    .map((line) => line.split(/\s+/).slice(0, 3));
}

/** The worker records the app told, as `event:id`. */
function logs(app: Child): string[] {
  return app.messages.filter((message) => 'log' in message).map((message) => `${String(message['log'])}:${String(message['id'])}`);
}

async function startApp(dir: string): Promise<{ app: Child; port: number }> {
  const app = startChild('pglite-app.mjs', { RWT_PGLITE_DIR: dir, RWT_SECRET: KEY });
  return { app, port: (await app.message('port', 60_000)) as number };
}

const never = () => Promise.reject(new Error('no statements here'));
const FAKE_PGLITE = { query: never, exec: never, transaction: never, listen: never, close: async () => {} };

const CREATE = (name: string, day: string) =>
  `{"action":"app:create","status":"success","timestamp":"2026-01-${day}T00:00:00Z","data":{"name":"${name}","rack":"r","actor":"x"}}`;

describe('a PGlite directory an app has open', () => {
  it('is the app’s alone: list, retry, replay and the console from another process refuse in one line and write nothing; once the app stops (cleanly or killed) the CLI sees every row', async () => {
    const dir = join(tempDir(), 'inbox-data');
    const { app, port } = await startApp(dir);
    const pid = app.process.pid!;
    const answers = [];
    for (const body of BODIES) answers.push(await post(port, body));
    expect(answers.map((answer) => answer.text)).toEqual([
      '{"status":"accepted"}',
      '{"status":"accepted"}',
      '{"status":"accepted"}',
      '{"status":"ignored"}',
    ]);
    await waitFor(
      () => logs(app).length === 3,
      20_000,
      () => `the app's worker to run three deliveries\n${app.output()}`,
    );
    expect(logs(app).sort()).toEqual(['dead:2', 'dead:3', 'processed:1']);

    // Every command that would open the directory is refused: exit 1, one line, nothing done.
    for (const args of [['inbox', 'list'], ['inbox', 'retry', '2'], ['inbox', 'replay', '--action', 'app:create'], ['console']]) {
      const command = args.slice(0, args[0] === 'inbox' ? 2 : 1).join(' ');
      expect(await run([...args, '--database', dir], { timeoutMs: 30_000 })).toEqual({
        code: 1,
        stdout: '',
        stderr: heldBy(command, dir, pid, 'node pglite-app.mjs'),
      });
    }
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${pid}\n`);
    // The app, untouched by them, keeps accepting and running deliveries.
    expect(await post(port, CREATE('gamma', '05'))).toEqual({ status: 200, text: '{"status":"accepted"}' });
    await waitFor(
      () => logs(app).includes('processed:5'),
      20_000,
      () => `delivery 5 to run\n${app.output()}`,
    );

    // A clean stop gives the directory back; the CLI then sees every row, as the app left it (no retry, no replay).
    app.process.kill('SIGTERM');
    expect(await app.message('closed', 20_000)).toBe(true);
    expect(await app.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    const afterStop = await run(['inbox', 'list', '--database', dir], { timeoutMs: 30_000 });
    expect(afterStop.stderr).toBe('');
    expect(listed(afterStop.stdout)).toEqual([
      ['1', 'done', '1'],
      ['2', 'dead', '1'],
      ['3', 'dead', '1'],
      ['4', 'ignored', '0'],
      ['5', 'done', '1'],
    ]);

    // Killed: its lock stays behind, names a process that is gone, and is taken over.
    const second = await startApp(dir);
    expect(await post(second.port, CREATE('delta', '06'))).toEqual({ status: 200, text: '{"status":"accepted"}' });
    await waitFor(
      () => logs(second.app).includes('processed:6'),
      20_000,
      () => `delivery 6 to run\n${second.app.output()}`,
    );
    expect((await killChild(second.app)).signal).toBe('SIGKILL');
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${second.app.process.pid}\n`);
    expect(await run(['inbox', 'retry', '2', '--database', dir], { timeoutMs: 30_000 })).toEqual({
      code: 0,
      stdout: 'retried 1 delivery (dead -> pending)\n',
      // The killed app's heartbeat may still look live for a few beats: then no note.
      stderr: expect.stringMatching(
        /^(note: no worker is running, so nothing runs it until one starts \(inbox\.work\(receiver\) in your app\)\n)?$/,
      ),
    });
    const afterKill = await run(['inbox', 'list', '--database', dir], { timeoutMs: 30_000 });
    expect(afterKill.stderr).toBe('');
    expect(listed(afterKill.stdout)).toEqual([
      ['1', 'done', '1'],
      ['2', 'pending', '1'],
      ['3', 'dead', '1'],
      ['4', 'ignored', '0'],
      ['5', 'done', '1'],
      ['6', 'done', '1'],
    ]);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  }, 180_000);

  it('an app started while a CLI command holds the directory is refused by createInbox, in one line that names the command', async () => {
    const dir = join(tempDir(), 'inbox-data');
    expect(await cli('inbox', 'migrate', '--database', dir)).toMatchObject({
      code: 0,
      err: `rack-webhooks: created ${dir} for a new PGlite database\n`,
    });
    // `console` keeps the directory until it is stopped.
    const consoleProcess = spawn(process.execPath, [join(process.cwd(), 'dist/cli.js'), 'console', '--database', dir], { stdio: 'pipe' });
    try {
      let printed = '';
      consoleProcess.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
      await waitFor(
        () => /http:\/\//.test(printed),
        30_000,
        () => `the console to start: ${printed}`,
      );
      const app = startChild('pglite-app.mjs', { RWT_PGLITE_DIR: dir, RWT_SECRET: KEY });
      const exit = await app.exited;
      expect(exit.code).toBe(1);
      expect(app.output()).toContain(
        `WebhookInboxError: createInbox: the PGlite database in ${dir} is open in another process (pid ${consoleProcess.pid}: node cli.js console); ` +
          'PGlite serves one process at a time: stop it first (a CLI command or the console lets go when it ends), or use PostgreSQL to share an inbox between processes\n',
      );
    } finally {
      consoleProcess.kill('SIGKILL');
    }
  }, 90_000);

  it('two processes starting at once on one directory: exactly one holds it, with or without a stale lock to take over', async () => {
    for (const stale of [false, true]) {
      const dir = tempDir();
      if (stale) {
        const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
        writeFileSync(join(dir, LOCK_FILE), `${gone.stdout}\n`);
      }
      const startAt = String(Date.now() + 1_500);
      const releaseFile = join(tempDir(), 'release');
      const racers = Array.from({ length: 6 }, () =>
        startChild('lock-race.mjs', { RWT_PGLITE_DIR: dir, RWT_START_AT: startAt, RWT_RELEASE_FILE: releaseFile }),
      );
      try {
        const outcomes = await Promise.all(
          racers.map(async (racer) => {
            await waitFor(
              () => racer.messages.length > 0,
              15_000,
              () => racer.output(),
            );
            return racer.messages[0]!;
          }),
        );
        const winners = outcomes.filter((outcome) => 'won' in outcome);
        expect(winners, JSON.stringify(outcomes)).toHaveLength(1);
        const winner = winners[0]!['won'] as number;
        for (const outcome of outcomes.filter((o) => 'refused' in o)) {
          expect(outcome['refused']).toMatch(
            new RegExp(`^createInbox: the PGlite database in .* is open in another process \\(pid ${winner}: node lock-race\\.mjs\\);`),
          );
        }
        expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${winner}\n`);
      } finally {
        writeFileSync(releaseFile, '');
      }
      await Promise.all(racers.map((racer) => racer.exited));
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false); // the winner's normal exit gave it back
    }
  }, 60_000);

  it('a lock naming a live process that started after the lock was written (its pid reused) is stale; one naming a process older than it is not', async () => {
    const dir = join(tempDir(), 'inbox-data');
    expect(await cli('inbox', 'migrate', '--database', dir)).toMatchObject({
      code: 0,
      err: `rack-webhooks: created ${dir} for a new PGlite database\n`,
    });
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const lock = join(dir, LOCK_FILE);
      writeFileSync(lock, `${sleeper.pid}\n`);
      // Written now, after the sleeper started: it holds the directory.
      expect(await cli('inbox', 'stats', '--database', dir)).toEqual({
        code: 1,
        out: '',
        err: `rack-webhooks inbox stats: the PGlite database in ${dir} is open in another process (pid ${sleeper.pid}: sleep 30); ${CLI_REMEDY}\n`,
      });
      // Written an hour ago: the process now behind that pid is not the one that wrote it.
      const anHourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(lock, anHourAgo, anHourAgo);
      expect(await cli('inbox', 'stats', '--database', dir)).toMatchObject({
        code: 0,
        err: '',
        out: expect.stringMatching(/^pending {4}0\n/),
      });
      expect(existsSync(lock)).toBe(false);
      // This very pid, left by an earlier process that had it (a container's pid 1 after a restart).
      writeFileSync(lock, `${process.pid}\n`);
      expect(await cli('inbox', 'stats', '--database', dir)).toMatchObject({ code: 0, err: '' });
      expect(existsSync(lock)).toBe(false);
    } finally {
      sleeper.kill('SIGKILL');
    }
  }, 60_000);

  it('in one process: createInbox holds the directory until PGlite is closed, and a second PGlite on it is refused', async () => {
    const dir = join(tempDir(), 'inbox-data');
    mkdirSync(dir);
    const db = new PGlite(dir);
    const inbox = createInbox({ database: db });
    const lock = join(dir, LOCK_FILE);
    expect(readFileSync(lock, 'utf8')).toBe(`${process.pid}\n`);
    createInbox({ database: db, table: 'another_inbox' }); // the same instance: fine
    await inbox.migrate();
    // A second PGlite on the directory, of which createInbox looks at dataDir alone (a real one would start writing it).
    const other = { ...FAKE_PGLITE, dataDir: dir };
    {
      let refused: unknown;
      try {
        createInbox({ database: other });
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(WebhookInboxError);
      expect(refused).toMatchObject({
        code: 'inbox_unavailable',
        message: `createInbox: the PGlite database in ${dir} is already open in this process, through another PGlite instance: each instance keeps its own copy, so pass the same instance to every createInbox (or close the first one)`,
      });
      // Where node:fs comes only asynchronously (Node before 20.16), the first statement is refused instead.
      const node = process as { getBuiltinModule?: unknown };
      const getBuiltinModule = node.getBuiltinModule;
      delete node.getBuiltinModule;
      let late;
      try {
        late = createInbox({ database: other });
      } finally {
        node.getBuiltinModule = getBuiltinModule;
      }
      await expect(late.stats()).rejects.toMatchObject({ code: 'inbox_unavailable', message: (refused as Error).message });
      // So is a CLI command run in this process.
      expect((await cli('inbox', 'stats', '--database', dir)).code).toBe(1);
    }
    await db.close();
    expect(existsSync(lock)).toBe(false);
    expect(await cli('inbox', 'stats', '--database', dir)).toMatchObject({ code: 0, err: '' });
    // Data in memory has no directory to hold.
    const memory = new PGlite();
    createInbox({ database: memory });
    await memory.close();
  }, 90_000);
});
