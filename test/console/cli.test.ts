/** `rack-webhooks console` as a user runs it: the printed URL, the token, Ctrl-C, and its refusals. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox } from '../../src/inbox/create-inbox.js';
import { expectUsageError, killChildren, run } from '../cli/helpers.js';
import { openDatabase, POSTGRES_URL } from '../inbox/databases.js';
import { captureOutput, cli, writtenSoFar } from '../kit/cli.js';
import { pgliteDirectory } from '../kit/pglite-directory.js';
import { killConsoles, startConsoleProcess } from './console-process.js';
import { until } from '../kit/time.js';

captureOutput();

afterEach(() => {
  killConsoles();
  killChildren();
});

describe('rack-webhooks console', () => {
  it('prints a tokened URL on 127.0.0.1, serves 401 without the token and the page with it, and stops on Ctrl-C', async () => {
    const db = await openDatabase('pg');
    try {
      await createInbox({ database: db.database, table: db.table }).migrate();
      const running = await startConsoleProcess(['--database', POSTGRES_URL, '--table', db.table]);
      expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
      expect(running.stdout()).toContain(`rack-webhooks console: ${db.table} at postgres://postgres@127.0.0.1:5432/test`);
      expect(running.stdout()).toMatch(/page \d+\.\d KB gzip; Ctrl-C to stop/);
      expect((await fetch(`${running.origin}/`)).status).toBe(401);
      expect((await fetch(`${running.origin}/assets/console.js`)).status).toBe(401);
      const first = await fetch(running.url, { redirect: 'manual' });
      expect(first.status).toBe(303);
      const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
      expect(first.headers.get('location')).toBe('/rack-webhooks-console/');
      const page = await fetch(`${running.origin}/rack-webhooks-console/`, { headers: { cookie } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('src="assets/console.js"');
      const script = await fetch(`${running.origin}/assets/console.js`, { headers: { cookie } });
      expect(script.status).toBe(200);
      expect((await script.text()).length).toBeGreaterThan(1000); // the real, built page
      expect(await running.stop('SIGINT')).toBe(0);
      expect(running.stderr()).toBe('rack-webhooks console: stopping (Ctrl-C again to quit at once)\n');
    } finally {
      await db.close();
    }
  }, 30_000);

  it('in this process (the CLI as a function): serves the overview with the printed token and returns 0 on Ctrl-C', async () => {
    const db = await openDatabase('pg');
    try {
      await createInbox({ database: db.database, table: db.table }).migrate();
      const before = process.listeners('SIGINT').length;
      const running = cli('console', '--database', POSTGRES_URL, '--table', db.table, '--host', '[::1]');
      await expect.poll(() => /^open (http:\/\/\S+)$/m.test(writtenSoFar().stdout), { timeout: 20_000 }).toBe(true);
      const url = new URL(/^open (http:\/\/\S+)$/m.exec(writtenSoFar().stdout)![1]!);
      const overview = await fetch(`${url.origin}/api/overview`, { headers: { authorization: `Bearer ${url.searchParams.get('token')}` } });
      expect(await overview.json()).toMatchObject({ stats: { total: 0 } });
      // Ctrl-C, as the process would get it: the handler the command added.
      const stop = process.listeners('SIGINT').at(-1) as () => void;
      expect(process.listeners('SIGINT')).toHaveLength(before + 1);
      stop();
      expect(await running).toMatchObject({ code: 0, err: 'rack-webhooks console: stopping (Ctrl-C again to quit at once)\n' });
      expect(process.listeners('SIGINT')).toHaveLength(before);
    } finally {
      await db.close();
    }
  }, 30_000);

  it('warns on stderr when it listens on another address than loopback', async () => {
    const db = await openDatabase('pg');
    try {
      await createInbox({ database: db.database, table: db.table }).migrate();
      const running = await startConsoleProcess(['--database', POSTGRES_URL, '--table', db.table, '--host', '0.0.0.0']);
      expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/);
      await until(() =>
        expect(running.stderr()).toMatch(
          /warning: listening on 0\.0\.0\.0, not 127\.0\.0\.1: anyone who can reach it and has the URL can retry and replay deliveries/,
        ),
      );
      expect(await running.stop('SIGTERM')).toBe(0);
    } finally {
      await db.close();
    }
  }, 30_000);

  it('opens a PGlite directory', async () => {
    // A copy of the run's template rather than a new directory: PGlite's initdb is not what this tests.
    const directory = pgliteDirectory(mkdtempSync(join(tmpdir(), 'rack-webhooks-console-pglite-')));
    try {
      expect((await run(['inbox', 'migrate', '--database', directory], { timeoutMs: 30_000 })).code).toBe(0);
      const running = await startConsoleProcess(['--database', directory]);
      const response = await fetch(`${running.origin}/api/overview`, {
        headers: { authorization: `Bearer ${new URL(running.url).searchParams.get('token')}` },
      });
      expect(await response.json()).toMatchObject({ table: 'rack_webhooks_inbox', stats: { total: 0 } });
      expect(await running.stop()).toBe(0);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }, 60_000);

  it('says which command creates the schema when the table is missing', async () => {
    const db = await openDatabase('pg');
    try {
      const result = await run(['console', '--database', POSTGRES_URL, '--table', db.table], { timeoutMs: 20_000 });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `rack-webhooks console: the database has no inbox table ${db.table} (or an older schema of it): run rack-webhooks inbox migrate --database ${POSTGRES_URL} --table ${db.table}\n`,
      );
    } finally {
      await db.close();
    }
  }, 30_000);

  it.each([
    [[], /^rack-webhooks console: no database: pass --database <postgres:\/\/ URL \| PGlite directory>$/m],
    [['--database', POSTGRES_URL, '--port', '70000'], /^rack-webhooks console: --port must be 0 to 65535, got "70000"$/m],
    [['--database', POSTGRES_URL, '--host', ''], /^rack-webhooks console: --host is empty/m],
    [['--database', 'mysql://x@y/z'], /must be a postgres:\/\/ or postgresql:\/\/ URL, or a directory for PGlite/],
  ])('refuses %j as a usage error', async (args, pattern) => {
    expectUsageError(await run(['console', ...args]), pattern);
  });

  it('is listed in the overview with its help', async () => {
    const overview = await run(['--help']);
    expect(overview.stdout).toMatch(/^ {2}console +a local web page over an inbox/m);
    const help = await run(['console', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: rack-webhooks console --database D');
  });
});
