// examples/express-inbox.mjs, run as a user would run it: on PostgreSQL (DATABASE_URL) and on PGlite
// (no DATABASE_URL), over real HTTP, with deliveries signed here from the spec, and stopped with
// SIGTERM. What it must hold: a 200 means a committed row, the handler runs once per delivery, and a
// SIGTERM exits 0 leaving nothing claimed and nothing lost (what was pending runs at the next start).
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../kit/time.js';
import { openDatabase, POSTGRES_URL, type TestDatabase } from '../inbox/databases.js';
import { pgliteDirectory } from '../kit/pglite-directory.js';
import { fixture, newKey, post, signature, startExample, stopAllExamples, type Running } from './helpers.js';

const FIRED = fixture('app.budget.auto-shutdown.fired');
const CAP = fixture('app.budget.cap');
const NOOP = fixture('app.budget.auto-shutdown.noop');

const firedLine = (app: string) =>
  new RegExp(`^auto-shutdown fired: app=${app} rack=example-rack tick=\\S+ \\(spend \\$103\\.90 of \\$100 cap\\) delivery=\\d+$`, 'm');
const linesMatching = (text: string, pattern: RegExp) => text.split('\n').filter((line) => new RegExp(pattern.source).test(line));

/** The fired fixture for another app: a distinct event (and distinct bytes) per app. */
function firedFor(app: string): string {
  return JSON.stringify({ ...FIRED.event, data: { ...FIRED.event.data, app } });
}

let database: TestDatabase<'pg'> | undefined;
let pgliteDir: string | undefined;
afterEach(async () => {
  await stopAllExamples();
  await database?.close();
  database = undefined;
  if (pgliteDir !== undefined) rmSync(pgliteDir, { recursive: true, force: true });
  pgliteDir = undefined;
});

/** Rows of the example's table, read with SQL (not through the SDK). */
async function states(db: TestDatabase<'pg'>): Promise<Record<string, number>> {
  const rows = await db.query<{ state: string; count: string }>(`SELECT state, count(*)::text AS count FROM ${db.table} GROUP BY state`);
  return Object.fromEntries(rows.map((row) => [row.state, Number(row.count)]));
}

async function expectCleanExit(running: Running): Promise<void> {
  // Generous: under load the worker may still be finishing handlers; never SIGKILL before 30 s.
  expect(await running.stop(30_000)).toEqual({ code: 0, signal: null });
  // Handlers running at the signal may print between the two lines; the last line is the stop.
  const lines = running.stdout().trim().split('\n');
  expect(lines.filter((line) => line.startsWith('[shutdown] SIGTERM: not ready; taking deliveries for'))).toHaveLength(1);
  expect(lines.at(-1)).toMatch(/^\[shutdown\] done in \d+ ms$/);
}

describe('examples/express-inbox.mjs on PostgreSQL (DATABASE_URL)', () => {
  it(
    'stores each verified delivery before the 200, runs its handler in the worker, and exits 0 on SIGTERM',
    { timeout: 240_000 },
    async () => {
      database = await openDatabase('pg');
      const key = newKey();
      const running = await startExample(
        'express-inbox.mjs',
        { RACK_WEBHOOK_SECRETS: key, SHUTDOWN_DRAIN_MS: '200', DATABASE_URL: POSTGRES_URL, INBOX_TABLE: database.table },
        60_000,
      );
      expect(running.stdout()).toContain('inbox on PostgreSQL (DATABASE_URL), worker running');

      const fired = signature(FIRED.body, key);
      expect(await post(running.url, FIRED.body, fired)).toMatchObject({ status: 200, json: { status: 'accepted' } });
      expect(await post(running.url, FIRED.body, fired)).toMatchObject({ status: 200, json: { status: 'duplicate' } });
      const forged = FIRED.body.replace('"billing-api"', '"payments-api"');
      expect(await post(running.url, forged, fired)).toMatchObject({ status: 401, json: { error: 'signature_mismatch' } });
      expect(await post(running.url, CAP.body, signature(CAP.body, key))).toMatchObject({ status: 200, json: { status: 'accepted' } });
      expect(await post(running.url, NOOP.body, signature(NOOP.body, key))).toMatchObject({ status: 200, json: { status: 'ignored' } });

      await waitFor(
        () => firedLine('billing-api').test(running.stdout()) && running.stdout().includes('budget cap reached: app=billing-api'),
        30_000,
        () => `the handlers did not run; stdout:\n${running.stdout()}\nstderr:\n${running.stderr()}`,
      );
      expect(linesMatching(running.stdout(), firedLine('billing-api'))).toHaveLength(1);
      // The forged copy stored nothing; the routine :noop is kept as 'ignored'. A handler printed before
      // its row was marked done, so wait for the rows too.
      await waitFor(
        async () => (await states(database!))['done'] === 2,
        30_000,
        () => 'both deliveries done',
        50,
      );
      expect(await states(database)).toEqual({ done: 2, ignored: 1 });
      const output = running.stdout() + running.stderr();
      expect(output).not.toContain(key);
      expect(output).not.toContain(fired.split('v1=')[1]!);

      await expectCleanExit(running);
      // One line on stderr: the forged copy's refusal.
      expect(running.stderr().trim().split('\n')).toEqual([
        expect.stringMatching(/^\[rack-webhooks\] warn rejected.*\(signature_mismatch\)/),
      ]);
    },
  );

  it(
    'loses nothing on SIGTERM mid-burst: every accepted delivery runs exactly once, the rest at the next start',
    { timeout: 300_000 },
    async () => {
      database = await openDatabase('pg');
      const key = newKey();
      const env = { RACK_WEBHOOK_SECRETS: key, SHUTDOWN_DRAIN_MS: '200', DATABASE_URL: POSTGRES_URL, INBOX_TABLE: database.table };
      const first = await startExample('express-inbox.mjs', env, 60_000);

      const apps = Array.from({ length: 40 }, (_, i) => `app-${String(i).padStart(2, '0')}`);
      const answers = await Promise.all(apps.map((app) => post(first.url, firedFor(app), signature(firedFor(app), key))));
      expect(answers.map((a) => a.status)).toEqual(apps.map(() => 200));
      expect(answers.map((a) => (a.json as { status: string }).status)).toEqual(apps.map(() => 'accepted'));
      // SIGTERM at once: the worker is in the middle of the burst (or done with it; either must hold).
      await expectCleanExit(first);

      // Nothing claimed after a clean stop: each row is done or waiting, and no attempt died.
      const afterStop = await states(database);
      expect(Object.keys(afterStop).filter((state) => state !== 'done' && state !== 'pending')).toEqual([]);
      expect((afterStop['done'] ?? 0) + (afterStop['pending'] ?? 0)).toBe(apps.length);
      const unfinished = await database.query(`SELECT outcome FROM ${database.table}_attempts WHERE outcome IS DISTINCT FROM 'succeeded'`);
      expect(unfinished).toEqual([]);

      // The next start runs what was pending.
      const second = await startExample('express-inbox.mjs', env, 60_000);
      await waitFor(
        async () => (await states(database!))['done'] === apps.length,
        60_000,
        () => `all ${apps.length} deliveries done`,
        50,
      );
      expect(await states(database)).toEqual({ done: apps.length });
      await expectCleanExit(second);
      expect(first.stderr() + second.stderr()).toBe('');

      // Each delivery's handler ran exactly once, across the two runs.
      const both = first.stdout() + second.stdout();
      for (const app of apps) expect(linesMatching(both, firedLine(app)), app).toHaveLength(1);
      const attempts = await database.query<{ count: string }>(`SELECT count(*)::text AS count FROM ${database.table}_attempts`);
      expect(Number(attempts[0]!.count)).toBe(apps.length);
    },
  );
});

describe('examples/express-inbox.mjs on PGlite (no DATABASE_URL)', () => {
  it('stores and handles a delivery in INBOX_DIR, exits 0 on SIGTERM and gives the directory back', { timeout: 480_000 }, async () => {
    // A new PGlite database (the run's template): PGlite's initdb in WebAssembly takes over a minute
    // on a busy machine, and what this proves starts after it.
    pgliteDir = pgliteDirectory(mkdtempSync(join(tmpdir(), 'rack-webhooks-example-inbox-')));
    const key = newKey();
    const running = await startExample(
      'express-inbox.mjs',
      { RACK_WEBHOOK_SECRETS: key, SHUTDOWN_DRAIN_MS: '200', INBOX_DIR: pgliteDir },
      240_000,
    );
    expect(running.stdout()).toContain(`inbox on PGlite in ${pgliteDir} (owner), worker running`);
    expect(readdirSync(pgliteDir).filter((name) => name.startsWith('.s.'))).toEqual(['.s.PGSQL.1', '.s.PGSQL.1.lock']); // its socket, for other processes, and the owner's pid file beside it

    expect(await post(running.url, FIRED.body, signature(FIRED.body, key))).toMatchObject({ status: 200, json: { status: 'accepted' } });
    await waitFor(
      () => firedLine('billing-api').test(running.stdout()),
      60_000,
      () => `the handler did not run; stdout:\n${running.stdout()}\nstderr:\n${running.stderr()}`,
    );
    await expectCleanExit(running);
    expect(running.stderr()).toBe('');
    expect(readdirSync(pgliteDir).filter((name) => name.startsWith('.s.'))).toEqual([]);

    // The process is gone and closed its PGlite: the directory opens here, and holds the row, done.
    const db = new PGlite(pgliteDir);
    try {
      const { rows } = await db.query<{ action: string; state: string }>('SELECT action, state FROM rack_webhooks_inbox');
      expect(rows).toEqual([{ action: 'app:budget:auto-shutdown:fired', state: 'done' }]);
    } finally {
      await db.close();
    }
  });
});
