/**
 * A PGlite directory has one owner, and every other process reaches its data through it. PGlite is
 * PostgreSQL inside one process: a second process opening the same files keeps its own view, so a
 * `retry` it reports done would be lost and two writers corrupt the directory. Here an app
 * (test/inbox/fixtures/pglite-app.mjs, `openPGlite(dir)` as the README shows), the built CLI and
 * apps in PID namespaces of their own run as real processes. The children import the built
 * package (npx tsup first).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSignedRequestSync } from '../../src/testing/signed-request.js';
import { killConsoles, startConsoleProcess } from '../console/console-process.js';
import { killAllChildren, killChild, startChild, waitFor, type Child } from '../inbox/fixtures/children.js';
import { pgliteDirectory } from '../kit/pglite-directory.js';
import { killChildren, removeTempDirs, run, tempDir } from './helpers.js';
import { BODIES, KEY, captureOutput, cli } from './inbox-helpers.js';

captureOutput();
afterEach(async () => {
  killChildren();
  killConsoles();
  await killAllChildren();
});
afterAll(removeTempDirs);

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

async function startApp(dir: string, env: Record<string, string> = {}): Promise<{ app: Child; port: number }> {
  const app = startChild('pglite-app.mjs', { RWT_PGLITE_DIR: dir, RWT_SECRET: KEY, ...env });
  return { app, port: (await app.message('port', 90_000)) as number };
}

const sockets = (dir: string) => readdirSync(dir).filter((name) => /^\.s\.PGSQL\.\d+$/.test(name));
const count = (app: Child, entry: string) => logs(app).filter((log) => log === entry).length;

const CREATE = (name: string, day: string) =>
  `{"action":"app:create","status":"success","timestamp":"2026-01-${day}T00:00:00Z","data":{"name":"${name}","rack":"r","actor":"x"}}`;

describe('a PGlite directory an app owns', () => {
  it('list, retry, replay, stats and the console from other processes go through the app: they see its rows, the app’s workers run what they requeue, and it is all there after the app stops; killed, the next process owns it and nothing acknowledged is lost', async () => {
    const dir = pgliteDirectory(join(tempDir(), 'inbox-data'));
    const { app, port } = await startApp(dir);
    expect(await app.message('role')).toBe('owner');
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
      30_000,
      () => `the app's worker to run three deliveries\n${app.output()}`,
    );
    expect(logs(app).sort()).toEqual(['dead:2', 'dead:3', 'processed:1']);

    const list = async () => {
      const result = await run(['inbox', 'list', '--database', dir], { timeoutMs: 60_000 });
      expect(result.stderr).toBe('');
      return listed(result.stdout);
    };
    expect(await list()).toEqual([
      ['1', 'done', '1'],
      ['2', 'dead', '1'],
      ['3', 'dead', '1'],
      ['4', 'ignored', '0'],
    ]);
    expect(await run(['inbox', 'retry', '2', '--database', dir], { timeoutMs: 60_000 })).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^retried 1 delivery \(dead -> pending\)\n/),
    });
    expect(await run(['inbox', 'replay', '--action', 'app:create', '--database', dir], { timeoutMs: 60_000 })).toMatchObject({
      code: 0,
      stderr: '',
    });
    await waitFor(
      () => count(app, 'dead:2') === 2 && count(app, 'replayed:1') === 1,
      30_000,
      () => `the app's worker to run the retried and the replayed delivery\n${app.output()}`,
    );
    expect(await run(['inbox', 'stats', '--database', dir], { timeoutMs: 60_000 })).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^pending {4}0\nrunning {4}0\ndone {7}1\ndead {7}2\nignored {4}1\n/),
    });
    // The console serves the app's rows too, for as long as it runs.
    const consoleProcess = await startConsoleProcess(['--database', dir], 60_000);
    try {
      const overview = await fetch(`${consoleProcess.origin}/api/overview`, {
        headers: { authorization: `Bearer ${new URL(consoleProcess.url).searchParams.get('token')}` },
      });
      expect(await overview.json()).toMatchObject({ stats: { total: 4, done: 1, dead: 2, ignored: 1 } });
    } finally {
      expect(await consoleProcess.stop()).toBe(0);
    }

    // A clean stop: the rows as the app and the commands left them, and no socket behind.
    app.process.kill('SIGTERM');
    expect(await app.message('closed', 30_000)).toBe(true);
    expect(await app.exited).toEqual({ code: 0, signal: null });
    expect(sockets(dir)).toEqual([]);
    expect(await list()).toEqual([
      ['1', 'done', '2'],
      ['2', 'dead', '2'],
      ['3', 'dead', '1'],
      ['4', 'ignored', '0'],
    ]);

    // Killed: its socket stays behind and refuses connections; the next process owns the directory.
    const second = await startApp(dir);
    expect(await second.app.message('role')).toBe('owner');
    expect(await post(second.port, CREATE('delta', '06'))).toEqual({ status: 200, text: '{"status":"accepted"}' });
    expect((await killChild(second.app)).signal).toBe('SIGKILL');
    expect(sockets(dir)).toHaveLength(1);
    expect((await list()).map((row) => row.slice(0, 2))).toEqual([
      ['1', 'done'],
      ['2', 'dead'],
      ['3', 'dead'],
      ['4', 'ignored'],
      ['5', expect.stringMatching(/^(pending|running|done)$/)],
    ]);
    expect(sockets(dir)).toEqual([]);
  }, 300_000);

  it('apps starting at once on one directory: one owns it, the others store through it, and every acknowledged delivery is there once', async () => {
    const dir = pgliteDirectory(join(tempDir(), 'inbox-data'));
    const apps = await Promise.all([0, 1, 2].map(() => startApp(dir)));
    const roles = await Promise.all(apps.map(({ app }) => app.message('role')));
    expect(roles.filter((role) => role === 'owner')).toHaveLength(1);
    expect(roles.filter((role) => role === 'guest')).toHaveLength(2);
    const sent = await Promise.all(apps.map(({ port }, index) => post(port, CREATE(`app-${index}`, `1${index}`))));
    expect(sent.map((answer) => answer.text)).toEqual(Array(3).fill('{"status":"accepted"}'));
    const result = await run(['inbox', 'list', '--database', dir], { timeoutMs: 60_000 });
    expect(
      listed(result.stdout)
        .map((row) => row[0])
        .sort(),
    ).toEqual(['1', '2', '3']);
    expect(sockets(dir)).toHaveLength(1);
  }, 300_000);

  it('two apps in two PID namespaces (both pid 1, neither sees the other): no lost or doubled row (scripts/pglite-namespaces.mjs)', async (context) => {
    if (spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true']).status !== 0) {
      if (process.env['CI'] === 'true') throw new Error('unshare -p -f --mount-proc is not available: CI runs as root on Linux');
      console.warn(
        'SKIPPED: two PID namespaces need `unshare -p -f --mount-proc` (root on Linux); run scripts/pglite-namespaces.mjs there',
      );
      context.skip();
    }
    const script = fileURLToPath(new URL('../../scripts/pglite-namespaces.mjs', import.meta.url));
    const result = spawnSync(process.execPath, [script, '40'], { encoding: 'utf8', timeout: 240_000 });
    expect(result.stderr).toBe('');
    const [roles, figures, verdict] = result.stdout.trim().split('\n');
    expect(roles).toMatch(/^left: (owner|guest) \(pid 1 in its namespace\), right: (owner|guest) \(pid 1 in its namespace\)$/);
    expect(roles!.match(/owner/g)).toHaveLength(1);
    expect(figures).toMatch(/^acknowledged 80, rows 80, distinct 80, lost 0, doubled 0, exit codes 0 0, \d+ ms$/);
    expect(verdict).toBe('ok: nothing lost, nothing doubled');
  }, 300_000);

  it('an app passing new PGlite(dir) (deprecated) while the console owns the directory is refused in one line that says to use openPGlite', async () => {
    // Not about creating a directory (test/cli/inbox.test.ts is): a copy of the run's template, migrated.
    const dir = pgliteDirectory(join(tempDir(), 'inbox-data'));
    expect(await cli('inbox', 'migrate', '--database', dir)).toMatchObject({ code: 0, err: '' });
    const consoleProcess = await startConsoleProcess(['--database', dir], 60_000);
    try {
      const app = startChild('pglite-app.mjs', { RWT_PGLITE_DIR: dir, RWT_SECRET: KEY, RWT_LEGACY: '1' });
      const exit = await app.exited;
      expect(exit.code).toBe(1);
      expect(app.output()).toContain(
        `WebhookInboxError: createInbox: the PGlite database in ${dir} is owned by another process or thread; ` +
          'pass createInbox({ database: await openPGlite(dir) }) to reach it through its owner, instead of a PGlite instance of your own\n',
      );
    } finally {
      await consoleProcess.stop('SIGKILL');
    }
  }, 180_000);
});
