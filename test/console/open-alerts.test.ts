/**
 * Open alerts (issue 20 point 6): the incidents a real inbox.watch() opened on a test clock, as the
 * console's /api/overview returns them and as `rack-webhooks inbox stats` prints them (text and
 * --json), on a real PostgreSQL and a real PGlite directory; `null` / n/a on a schema without an
 * incidents table.
 */
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { setUp } from '../kit/setup.js';
import { startConsole, type RunningConsole } from '../../src/console/server/start-console.js';
import { composeInbox, createInbox } from '../../src/inbox/create-inbox.js';
import { resolveTableNames } from '../../src/inbox/schema/table-name.js';
import type { Alert } from '../../src/inbox/watch/types.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { createSignedRequestSync } from '../../src/testing/signed-request.js';
import { createTestEvent } from '../../src/testing/test-event.js';
import { removeTempDirs, tempDir } from '../cli/helpers.js';
import { KEY, captureOutput, cli } from '../cli/inbox-helpers.js';
import { POSTGRES_URL, openDatabase } from '../inbox/databases.js';
import { pgliteDirectory } from '../kit/pglite-directory.js';
import { MINUTE, TestClock } from '../inbox/watch/helpers.js';
import { SCHEMAS, fakeAssets } from './console-fixture.js';
import { until } from '../kit/time.js';

setUp({ testTimeoutMs: 120_000, hookTimeoutMs: 120_000, pglite: false });
captureOutput();
const schemas: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  await Promise.all(schemas.map((db) => db.close()));
  removeTempDirs();
});

type Query = (text: string, params?: readonly unknown[]) => Promise<Record<string, unknown>[]>;

interface Place {
  readonly database: unknown;
  readonly query: Query;
  /** The table as --table takes it, and as the inbox is told. */
  readonly table: string;
  /** A second table of the same database. */
  readonly other: string;
  readonly cliDatabase: string;
  close(): Promise<void>;
}

async function openPlace(kind: 'pg' | 'pglite'): Promise<Place> {
  if (kind === 'pg') {
    const db = await openDatabase('pg');
    schemas.push(db);
    const pool = db.database as pg.Pool;
    return {
      database: pool,
      query: async (text, params) => (await pool.query(text, params as unknown[])).rows,
      table: db.table,
      other: `${db.schema}.other`,
      cliDatabase: POSTGRES_URL,
      // The schema goes when the test ends, not when the CLI is about to read it.
      close: async () => {},
    };
  }
  const dir = pgliteDirectory(join(tempDir(), 'inbox-data'));
  const database = await PGlite.create(dir);
  return {
    database,
    query: async (text, params) => (await database.query(text, params as unknown[])).rows as Record<string, unknown>[],
    table: 'deliveries',
    other: 'other',
    cliDatabase: dir,
    close: () => database.close(),
  };
}

function consoleOver(place: Place, table: string): Promise<RunningConsole> {
  const { operator, monitor } = composeInbox({ database: place.database, table, notify: false });
  return startConsole({
    operator,
    monitor,
    databaseShown: 'test',
    assetsDirectory: fakeAssets(),
    schemasDirectory: SCHEMAS,
  });
}

async function overviewAlerts(running: RunningConsole): Promise<unknown> {
  const response = await fetch(`${running.origin}/api/overview`, { headers: { authorization: `Bearer ${running.token}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { alerts: unknown }).alerts;
}

const send = (receiver: ReturnType<typeof createReceiver>, event: object) =>
  receiver.receive(createSignedRequestSync(event, { secrets: KEY })).then(({ outcome }) => expect(outcome).toBe('accepted'));

describe.each(['pg', 'pglite'] as const)('open alerts on %s', (kind) => {
  it('lists the incidents inbox.watch() opened in the console overview and inbox stats; n/a without an incidents table', async () => {
    const place = await openPlace(kind);
    const inbox = createInbox({ database: place.database, table: place.table, notify: false });
    await inbox.migrate();
    // A second inbox whose schema has no incidents table (as before migration 6).
    const older = createInbox({ database: place.database, table: place.other, notify: false });
    await older.migrate();
    await place.query(`DROP TABLE ${resolveTableNames(place.other).schemaPrefix}"${resolveTableNames(place.other).bare}_incidents"`);

    const running = await consoleOver(place, place.table);
    const runningOlder = await consoleOver(place, place.other);
    const watchers: { stop(): Promise<void> }[] = [];
    let closed = false;
    try {
      expect(await overviewAlerts(running)).toEqual([]);
      expect(await overviewAlerts(runningOlder)).toBeNull();

      // One delivery goes dead (critical); another waits past the backlog bound with no worker (warning).
      const receiver = createReceiver({ secrets: KEY, inbox });
      receiver.on('app:budget:cap', () => {
        throw new Error('handler down');
      });
      receiver.on('app:budget:threshold', () => {});
      await send(receiver, createTestEvent('app:budget:cap', { data: { app: 'needy-api' } }));
      const worker = inbox.work(receiver, { maxAttempts: 1, listen: false, concurrency: 1 });
      await worker.drain();
      await worker.stop();
      await send(receiver, createTestEvent('app:budget:threshold', { data: { app: 'calm-api' } }));

      const clock = new TestClock();
      let reads = 0;
      const told: Alert[] = [];
      const errors: Error[] = [];
      const watcher = inbox.watch({
        onAlert: (alert) => void told.push(alert),
        onError: (error) => void errors.push(error),
        retention: false,
        intervalMs: 3_600_000,
        now: () => {
          reads++;
          return clock.now();
        },
        rules: { dead: {}, backlog: { afterMs: 5 * MINUTE }, silence: false, overdueLifecycle: false, noWorker: false, refusals: false },
      });
      watchers.push(watcher);
      // Its first evaluation is on a zero timer: once it has begun (it read the clock), a check runs after it.
      await until(() => expect(reads).toBeGreaterThan(0));
      await watcher.check();
      clock.advance(6 * MINUTE);
      await watcher.check();
      expect(errors).toEqual([]);
      expect(told.map((alert) => `${alert.key} ${alert.severity} ${alert.status}`).sort()).toEqual([
        'backlog warning open',
        'dead critical open',
      ]);
      const dead = told.find((alert) => alert.rule === 'dead')!;
      const backlog = told.find((alert) => alert.rule === 'backlog')!;
      expect(dead.summary).toMatch(/^1 delivery went dead in /);
      expect(backlog.summary).toMatch(/^1 delivery is due in \S+ and the oldest has waited 6 min/);
      const asJson = (alert: Alert) => ({
        rule: alert.rule,
        severity: alert.severity,
        key: alert.key,
        summary: alert.summary,
        since: alert.since.toISOString(),
        openedAt: alert.openedAt.toISOString(),
      });

      // The console reads the table, not the watcher: the same with the watcher stopped.
      await watcher.stop();
      expect(await overviewAlerts(running)).toEqual([asJson(dead), asJson(backlog)]);
      expect(await overviewAlerts(runningOlder)).toBeNull();

      // A PGlite directory is one process's at a time: the CLI opens it once this test has let go.
      await Promise.all([running.close(), runningOlder.close()]);
      await Promise.all([inbox.close(), older.close()]);
      await place.close();
      closed = true;
      const on = ['--database', place.cliDatabase, '--table', place.table];
      const text = await cli('inbox', 'stats', ...on);
      expect(text.code, text.err).toBe(0);
      const timeOf = (at: Date) =>
        at.toISOString().slice(0, 10) === new Date().toISOString().slice(0, 10)
          ? `${at.toISOString().slice(11, 19)} UTC`
          : `${at.toISOString().slice(0, 10)} ${at.toISOString().slice(11, 16)} UTC`;
      expect(text.out).toContain(
        '\nrefused (last hour): none\nopen alerts: 2\n' +
          `  critical  since ${timeOf(dead.since)}  ${dead.summary}\n` +
          `  warning   since ${timeOf(backlog.since)}  ${backlog.summary}\n`,
      );
      expect(text.out.endsWith(`${backlog.summary}\n`)).toBe(true);
      const json = JSON.parse((await cli('inbox', 'stats', ...on, '--json')).out) as Record<string, unknown>;
      expect(json['openAlerts']).toEqual([asJson(dead), asJson(backlog)]);
      expect(json).toMatchObject({ dead: 1, pending: 1, refusedLastHour: [] });

      const onOlder = ['--database', place.cliDatabase, '--table', place.other];
      expect((await cli('inbox', 'stats', ...onOlder)).out).toContain(
        '\nopen alerts: n/a (no incidents table in this schema: run rack-webhooks inbox migrate)\n',
      );
      expect(JSON.parse((await cli('inbox', 'stats', ...onOlder, '--json')).out)).toMatchObject({ openAlerts: null, total: 0 });
    } finally {
      await Promise.all(watchers.map((watcher) => watcher.stop()));
      if (!closed) {
        await Promise.all([running.close(), runningOlder.close()]);
        await Promise.all([inbox.close(), older.close()]);
        await place.close();
      }
    }
  });
});
