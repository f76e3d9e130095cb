/**
 * `rack-webhooks inbox ...` and `listen --inbox`, on a real PostgreSQL (a schema of its own, so
 * `--table schema.name`) and a real PGlite directory. Most commands run in this process through
 * runCli (coverage sees them); a listener holding a PGlite directory and a CLI without its
 * optional peers run as real processes.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/cli.js';
import { exportLine, parseExportLine } from '../../src/cli/commands/inbox/export-line.js';
import { formatAge } from '../../src/cli/format.js';
import { connectionReason, databaseTarget, isMissingPackage, loadPeer, scrub } from '../../src/cli/open-database.js';
import { createInbox } from '../../src/inbox.js';
import { LATEST_VERSION, MIGRATIONS } from '../../src/inbox/schema/migrations.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { createSignedRequestSync } from '../../src/testing/signed-request.js';
import { createTestEvent } from '../../src/testing/test-event.js';
import { POSTGRES_URL, connectionRefusedUrl, databaseForFile, type TestDatabase } from '../inbox/databases.js';
import { CLI, killChildren, run, startListener, tempDir, writeTemp, removeTempDirs } from './helpers.js';
import { BODIES, HANDLER_ERROR, KEY, captureOutput, cli, exportLineFor, seedDeliveries, writtenSoFar } from './inbox-helpers.js';
import { within } from '../kit/time.js';

/** What `inbox migrate` prints of a fresh table: every migration, then the version. */
const APPLIED_ALL = `applied versions ${MIGRATIONS.map((m) => m.version).join(', ')}; schema version ${LATEST_VERSION}`;

captureOutput();
afterEach(killChildren);
afterAll(removeTempDirs);

let db: TestDatabase<'pg'>;
databaseForFile('pg', (opened) => (db = opened));

let tableCount = 0;
const newTable = (prefix = 't') => `${db.schema}.${prefix}${++tableCount}`;
const on = (table: string) => ['--database', POSTGRES_URL, '--table', table];

/** What retry and replay add on stderr when no worker is live to run what they moved. */
const NO_WORKER = (what: 'it' | 'them') =>
  `note: no worker is running, so nothing runs ${what} until one starts (inbox.work(receiver) in your app)\n`;

/** A fresh table in this file's schema, migrated by the CLI and seeded through the SDK. */
async function seeded(): Promise<string> {
  const table = newTable();
  expect(await cli('inbox', 'migrate', ...on(table))).toEqual({
    code: 0,
    out: `${table}: ${APPLIED_ALL}\n`,
    err: '',
  });
  await seedDeliveries(db.database, table);
  return table;
}

/** The ids of a human `list`, in the order printed. */
function ids(out: string): string[] {
  return out
    .split('\n')
    .slice(1)
    .filter((line) => /^\d/.test(line))
    .map((line) => line.split(' ')[0]!);
}

async function rows(table: string): Promise<Record<string, unknown>[]> {
  return db.query(`SELECT id::int AS id, state, body, signature, received_at, replayed_at FROM ${table} ORDER BY id`);
}

/** A one-line usage error from an in-process run: exit 2, nothing on stdout. */
function usage(result: { code: number; out: string; err: string }, pattern: RegExp): void {
  expect(result.code, result.err).toBe(2);
  expect(result.out).toBe('');
  expect(result.err.split('\n')).toHaveLength(2);
  expect(result.err).toMatch(pattern);
}

describe('inbox on PostgreSQL', () => {
  it('migrate applies the schema once; list prints every delivery in event order, filtered and paged', async () => {
    const table = await seeded();
    expect(await cli('inbox', 'migrate', ...on(table))).toEqual({
      code: 0,
      out: `${table}: nothing to apply; schema version ${LATEST_VERSION}\n`,
      err: '',
    });
    expect(await cli('inbox', 'list', ...on(table))).toEqual({
      code: 0,
      err: '',
      out: [
        'ID  STATE    ATTEMPTS  EVENT TIME                      ACTION               APP',
        '1   done     1         2026-01-01T00:00:00.000000001Z  app:create           alpha',
        '2   dead     1         2026-01-02T00:00:00Z            app:budget:cap       alpha',
        '3   dead     1         2026-01-03T00:00:00Z            app:budget:cap       beta',
        '4   ignored  0         2026-01-04T00:00:00Z            app:from-the-future  beta',
        '',
      ].join('\n'),
    });
    const listed = async (...flags: string[]) => {
      const result = await cli('inbox', 'list', ...on(table), ...flags);
      expect(result.code, result.err).toBe(0);
      return ids(result.out);
    };
    expect(await listed('--state', 'dead')).toEqual(['2', '3']);
    expect(await listed('--state', 'done,ignored')).toEqual(['1', '4']);
    expect(await listed('--action', 'app:budget:*', '--app', 'beta')).toEqual(['3']);
    expect(await listed('--action', 'app:create', '--action', 'app:from-the-future')).toEqual(['1', '4']);
    expect(await listed('--from', '2026-01-02', '--to', '2026-01-03T00:00:00Z')).toEqual(['2']);
    // Nanoseconds count: one past the first event's time leaves it out.
    expect(await listed('--from', '2026-01-01T00:00:00.000000002Z')).toEqual(['2', '3', '4']);
    expect(await listed('--from', '3650d')).toEqual(['1', '2', '3', '4']);
    expect(await cli('inbox', 'list', ...on(table), '--app', 'nobody')).toEqual({ code: 0, out: 'no deliveries\n', err: '' });

    const first = await cli('inbox', 'list', ...on(table), '--order', 'desc', '--limit', '2');
    expect(ids(first.out)).toEqual(['4', '3']);
    const cursor = /^next: --after (\S+)$/m.exec(first.out)?.[1];
    expect(cursor).toBe('1767398400000000000.3'); // 2026-01-03 in nanoseconds, then the id
    const second = await cli('inbox', 'list', ...on(table), '--order', 'desc', '--after', cursor!);
    expect(ids(second.out)).toEqual(['2', '1']);
    expect(second.out).not.toContain('next:');

    const json = await cli('inbox', 'list', ...on(table), '--json', '--limit', '1');
    expect(json.code).toBe(0);
    expect(json.err).toBe('next: --after 1767225600000000001.1\n'); // stdout stays one object per line
    expect(json.out.split('\n')).toHaveLength(2);
    expect(JSON.parse(json.out)).toMatchObject({
      id: '1',
      state: 'done',
      action: 'app:create',
      app: 'alpha',
      tickId: null,
      eventTime: '2026-01-01T00:00:00.000000001Z',
      eventNanos: '1767225600000000001',
      secretIndex: 0,
      attempts: 1,
      lastError: null,
      receivedAt: expect.stringMatching(/Z$/),
    });

    usage(
      await cli('inbox', 'list', ...on(table), '--state', 'finished'),
      /^rack-webhooks inbox list: --state must be one of pending, running, done, dead, ignored, duplicate, got "finished"\n$/,
    );
    usage(await cli('inbox', 'list', ...on(table), '--action', 'app*'), /--action must be an action or a prefix pattern/);
    usage(
      await cli('inbox', 'list', ...on(table), '--action', 'app:budget:capp'),
      /^rack-webhooks inbox list: --action "app:budget:capp" is not a known action: did you mean "app:budget:cap"\?\n$/,
    );
    usage(await cli('inbox', 'replay', ...on(table), '--action', 'App:Budget:*'), /did you mean "app:budget:\*"\?/);
    usage(await cli('inbox', 'list', ...on(table), '--from', 'yesterday'), /--from must be an RFC 3339 time .* got "yesterday"/);
    usage(await cli('inbox', 'list', ...on(table), '--limit', '0'), /--limit must be a whole number from 1 to 1000/);
    usage(await cli('inbox', 'list', ...on(table), '--after', 'page-2'), /--after must be the "next" cursor/);
    usage(await cli('inbox', 'list', ...on(table), '--order', 'newest'), /--order must be asc or desc/);
    usage(
      await cli('inbox', 'list', ...on(table), 'stray'),
      /^rack-webhooks inbox list: unexpected argument: this command takes flags only/,
    );
  });

  it('show prints one delivery in full, with the signature header only in --json', async () => {
    const table = await seeded();
    const [stored] = await db.query<{ signature: string }>(`SELECT signature FROM ${table} WHERE id = 2`);
    const shown = await cli('inbox', 'show', '2', ...on(table));
    expect(shown.code, shown.err).toBe(0);
    expect(shown.err).toBe('');
    const lines = shown.out.split('\n');
    expect(lines.slice(0, 7)).toEqual([
      'delivery 2',
      '  state        dead',
      '  action       app:budget:cap',
      '  app          alpha',
      '  tick_id      -',
      '  event time   2026-01-02T00:00:00Z',
      expect.stringMatching(/^ {2}received at {2}\d{4}-\d\d-\d\dT[\d:.]+Z$/),
    ]);
    expect(shown.out).toMatch(/^ {2}signed at {4}t=\d{10} \(\d{4}-[\d-]+T[\d:.]+Z\)$/m);
    expect(shown.out).toContain("\n  secret       #1 in the receiver's list (secretIndex 0)\n");
    // A dead delivery waits for no run: no "next run" line (a pending one has it).
    expect(shown.out).not.toContain('next run');

    expect(shown.out).toContain(`\n  signature    present (${stored!.signature.length} bytes)\n`);
    expect(shown.out).toContain(`\n  body         ${Buffer.byteLength(BODIES[1])} bytes\n`);
    // The handler's error is shown on one line, its escape sequence defused.
    expect(shown.out).toContain('\n  last error   cap handler failed \ufffd[31mred\n');
    // The class it was thrown as before the message; then the frames of its stack (issue 20).
    expect(shown.out).toMatch(
      /\nattempt log:\n {2}#1 {2}failed {5}cli-test-worker {2}\S+Z -> \S+Z {2}Error: cap handler failed \ufffd\[31mred\n/,
    );
    expect(shown.out).toMatch(/\nstack of attempt #1:\n {4}at .+inbox-helpers\.ts:\d+:\d+/);
    expect(shown.out).toContain('\nevent:\n{\n  "action": "app:budget:cap",\n');
    expect(shown.out).toContain('\n    "app": "alpha",\n');
    expect(shown.out).not.toContain(stored!.signature);
    expect(shown.out).not.toContain(stored!.signature.slice(-64)); // not even the digest
    expect(shown.out).not.toContain('\u001b');

    const json = await cli('inbox', 'show', '2', ...on(table), '--json');
    expect(json.code).toBe(0);
    expect(json.out.split('\n')).toHaveLength(2);
    expect(JSON.parse(json.out)).toMatchObject({
      id: '2',
      state: 'dead',
      signature: stored!.signature,
      body: BODIES[1],
      event: { action: 'app:budget:cap', data: { app: 'alpha' } },
      eventNanos: '1767312000000000000',
      lastError: HANDLER_ERROR,
      attemptLog: [
        {
          attempt: 1,
          worker: 'cli-test-worker',
          outcome: 'failed',
          error: HANDLER_ERROR,
          errorClass: 'Error',
          errorStack: expect.stringContaining('inbox-helpers.ts'),
          startedAt: expect.stringMatching(/Z$/),
        },
      ],
    });
    expect((await cli('inbox', 'show', '1', ...on(table))).out).toMatch(/\nattempt log:\n {2}#1 {2}succeeded {2}cli-test-worker /);

    expect(await cli('inbox', 'show', '999999', ...on(table))).toEqual({
      code: 1,
      out: '',
      err: 'rack-webhooks inbox show: no delivery with id 999999\n',
    });
    usage(await cli('inbox', 'show', ...on(table)), /^rack-webhooks inbox show: no delivery id: /);
    const pasted = await cli('inbox', 'show', 'KEYMARKER', ...on(table));
    usage(pasted, /^rack-webhooks inbox show: a delivery id is a positive whole number/);
    expect(pasted.err).not.toContain('KEYMARKER');
    usage(await cli('inbox', 'show', '1', '2', ...on(table)), /takes at most 1 argument besides its flags/);
    // Retried, it is pending again: now it waits for a run, and says when.
    expect((await cli('inbox', 'retry', '2', ...on(table))).code).toBe(0);
    expect((await cli('inbox', 'show', '2', ...on(table))).out).toMatch(/\n {2}next run {5}\S/);
  });

  it('a repeat of an event with new times is its own duplicate row: list, show, stats and retry show and run it', async () => {
    const table = newTable();
    expect((await cli('inbox', 'migrate', ...on(table))).code).toBe(0);
    const inbox = createInbox({ database: db.database, table, notify: false });
    const receiver = createReceiver({ secrets: KEY, inbox });
    // The two :failed events a deployed rack sends under one tick (field notes), then the first one again with new times.
    const tick = 'tick-2026-04-27T10:30:00Z-1f0c9a7e5b2d4c3e8a9b0c1d2e3f4a5b';
    const failed = (time: string, services: string, partial: '0' | '1') =>
      JSON.stringify(
        createTestEvent('app:budget:auto-shutdown:failed', {
          timestamp: time,
          data: { app: 'billing-api', tick_id: tick, failed_services: services, partial_state: partial, failed_at: time },
        }),
      );
    const send = (body: string) => receiver.receive(createSignedRequestSync(body, { secrets: KEY }));
    const first = await send(failed('2026-04-27T10:31:00.1Z', 'worker', '1'));
    const restore = await send(failed('2026-04-28T08:00:00.5Z', 'web', '0'));
    const repeat = await send(failed('2026-04-27T10:31:00.9Z', 'worker', '1'));
    const copy = await send(failed('2026-04-27T10:31:00.1Z', 'worker', '1'));
    expect([first.outcome, restore.outcome]).toEqual(['accepted', 'accepted']);
    expect(repeat).toMatchObject({ outcome: 'duplicate', id: expect.stringMatching(/^\d+$/), duplicateOf: first.id });
    expect(copy).toMatchObject({ outcome: 'duplicate' });
    expect(copy.id).toBeUndefined(); // byte-identical: no row
    await inbox.close();

    expect(ids((await cli('inbox', 'list', ...on(table), '--state', 'duplicate')).out)).toEqual([repeat.id]);
    const shown = await cli('inbox', 'show', repeat.id!, ...on(table));
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out.split('\n').slice(0, 6)).toEqual([
      `delivery ${repeat.id}`,
      '  state         duplicate',
      '  action        app:budget:auto-shutdown:failed',
      '  app           billing-api',
      `  tick_id       ${tick}`,
      `  duplicate of  delivery ${first.id} (the same event; no handler ran for this one)`,
    ]);
    expect(shown.out).toContain('"failed_at": "2026-04-27T10:31:00.9Z"');
    expect(JSON.parse((await cli('inbox', 'show', repeat.id!, ...on(table), '--json')).out)).toMatchObject({
      state: 'duplicate',
      duplicateOf: first.id,
      attempts: 0,
    });
    expect((await cli('inbox', 'show', first.id!, ...on(table))).out).not.toContain('duplicate of');
    expect(JSON.parse((await cli('inbox', 'stats', ...on(table), '--json')).out)).toMatchObject({ pending: 2, duplicate: 1, total: 3 });

    // A bulk retry leaves duplicates alone; by id, or with --state duplicate, it moves them.
    expect((await cli('inbox', 'retry', ...on(table), '--all')).out).toBe('retried 0 deliveries (dead -> pending)\n');
    expect(await cli('inbox', 'retry', repeat.id!, ...on(table))).toEqual({
      code: 0,
      out: 'retried 1 delivery (duplicate -> pending)\n',
      err: NO_WORKER('it'),
    });
    expect((await cli('inbox', 'retry', ...on(table), '--state', 'duplicate')).out).toBe('retried 0 deliveries (duplicate -> pending)\n');
    expect((await rows(table)).map((row) => row['state'])).toEqual(['pending', 'pending', 'pending']);
  });

  it('stats, retry, replay and prune change exactly the rows they report, and wake other workers', async () => {
    const table = await seeded();
    expect(await cli('inbox', 'stats', ...on(table))).toEqual({
      code: 0,
      err: '',
      out:
        'pending    0\nrunning    0\ndone       1\ndead       2\nignored    1\nduplicate  0\ntotal      4\noldest pending: none\n' +
        'refused (last hour): none\nopen alerts: none\n',
    });

    usage(
      await cli('inbox', 'retry', ...on(table)),
      /^rack-webhooks inbox retry: say which deliveries: pass filter flags .* or --all for every dead one\n$/,
    );
    usage(
      await cli('inbox', 'retry', ...on(table), '--state', 'done'),
      /retry moves dead and duplicate deliveries only: leave out --state, or pass --state dead or duplicate/,
    );
    usage(await cli('inbox', 'retry', '3', ...on(table), '--all'), /pass an id or filter flags, not both/);

    // A worker in another process LISTENs on the inbox's channel: a retry wakes it at once.
    const listener = new pg.Client({ connectionString: POSTGRES_URL });
    await listener.connect();
    const notified = new Promise<string>((resolve) => listener.on('notification', (message) => resolve(message.channel)));
    const channel = `${table.replace('.', '__')}_due`;
    await listener.query(`LISTEN "${channel}"`);
    try {
      expect(await cli('inbox', 'retry', '2', ...on(table))).toEqual({
        code: 0,
        out: 'retried 1 delivery (dead -> pending)\n',
        err: NO_WORKER('it'),
      });
      expect(await within(notified, 5000, 'the NOTIFY of the retry')).toBe(channel);
    } finally {
      await listener.end();
    }
    expect((await rows(table)).map((row) => row['state'])).toEqual(['done', 'pending', 'dead', 'ignored']);
    expect(await cli('inbox', 'retry', '2', ...on(table))).toEqual({
      code: 1,
      out: '',
      err: 'rack-webhooks inbox retry: delivery 2 is pending, not dead: retry moves dead and duplicate deliveries only\n',
    });
    expect((await cli('inbox', 'retry', '1', ...on(table))).err).toBe(
      'rack-webhooks inbox retry: delivery 1 is done, not dead: retry moves dead and duplicate deliveries only (replay runs done ones again)\n',
    );
    expect(await cli('inbox', 'retry', '999999', ...on(table))).toEqual({
      code: 1,
      out: '',
      err: 'rack-webhooks inbox retry: no delivery with id 999999\n',
    });
    // With a live worker (a fresh heartbeat), no note: it runs what moved.
    await db.query(`INSERT INTO ${table}_workers (id, host, pid, beat_ms, concurrency, mode) VALUES ('w1', 'h', 1, 60000, 1, 'none')`);
    expect(await cli('inbox', 'retry', ...on(table), '--action', 'app:budget:*', '--state', 'dead')).toEqual({
      code: 0,
      out: 'retried 1 delivery (dead -> pending)\n',
      err: '',
    });
    await db.query(`DELETE FROM ${table}_workers`);
    expect(await cli('inbox', 'retry', ...on(table), '--all')).toEqual({
      code: 0,
      out: 'retried 0 deliveries (dead -> pending)\n',
      err: '',
    });

    const stats = await cli('inbox', 'stats', ...on(table));
    expect(stats.out).toMatch(
      /^pending {4}2\nrunning {4}0\ndone {7}1\ndead {7}0\nignored {4}1\nduplicate {2}0\ntotal {6}4\noldest pending: received \d+ (ms|s) ago\nrefused \(last hour\): none\nopen alerts: none\n$/,
    );
    // --history: sparklines, a line an hour for a day (refusals and workers: every migrated schema records them).
    const day = await cli('inbox', 'stats', ...on(table), '--history', 'day');
    expect(day.code, day.err).toBe(0);
    expect(day.out).toMatch(/\nper hour over the last day \(UTC, from \d{4}-\d\d-\d\dT\d\d:00Z; one character an hour\):\n/);
    // (Seeded this hour, or the last one if the clock just turned: either way 24 characters, total 4.)
    expect(day.out).toMatch(/\n {2}accepted {3}[.\u2581-\u2588]{24} {2}total 4, peak [1-4] in an hour\n/);
    expect(day.out).toContain('\n  refused    ........................  total 0, peak 0 in an hour\n');
    expect(day.out).toContain('\n  live workers: 0\n');
    expect(day.out.split('\n').filter((line) => /^\d{4}-\d\d-\d\d \d\d:00Z /.test(line))).toHaveLength(24);
    const week = await cli('inbox', 'stats', ...on(table), '--history', 'week');
    expect(week.out).toMatch(/one character 6 hours\):\n {2}accepted {3}[.\u2581-\u2588]{28} {2}total 4/);
    expect(week.out).not.toMatch(/^\d{4}-\d\d-\d\d \d\d:00Z /m);
    const history = JSON.parse((await cli('inbox', 'stats', ...on(table), '--history', 'week', '--json')).out);
    expect(history.history.span).toBe('week');
    expect(history.history.hours).toHaveLength(168);
    expect(history.history.hours.reduce((sum: number, hour: { accepted: number }) => sum + hour.accepted, 0)).toBe(4);
    expect(history.history.hours[167]).toMatchObject({ refused: 0, duplicate: 0 });
    usage(await cli('inbox', 'stats', ...on(table), '--history', 'month'), /^rack-webhooks inbox stats: --history must be day or week\n$/);
    expect(JSON.parse((await cli('inbox', 'stats', ...on(table), '--json')).out)).toEqual({
      pending: 2,
      running: 0,
      done: 1,
      dead: 0,
      ignored: 1,
      duplicate: 0,
      total: 4,
      oldestPendingAgeMs: expect.any(Number),
      refusedLastHour: [],
      openAlerts: [],
    });

    usage(
      await cli('inbox', 'replay', ...on(table)),
      /^rack-webhooks inbox replay: say which deliveries: .* or --all for every done one\n$/,
    );
    usage(await cli('inbox', 'replay', ...on(table), '--state', 'dead'), /replay moves done deliveries only/);
    expect(await cli('inbox', 'replay', ...on(table), '--app', 'beta')).toEqual({
      code: 0,
      out: 'replayed 0 deliveries (done -> pending)\n',
      err: '',
    });
    // By id, as retry takes one: the done delivery (row 1) only, and a clear refusal otherwise.
    const [done] = await db.query<{ id: string }>(`SELECT id::text AS id FROM ${table} WHERE state = 'done'`);
    expect(await cli('inbox', 'replay', done!.id, ...on(table))).toEqual({
      code: 0,
      out: 'replayed 1 delivery (done -> pending)\n',
      err: NO_WORKER('it'),
    });
    expect(await cli('inbox', 'replay', done!.id, ...on(table))).toEqual({
      code: 1,
      out: '',
      err: `rack-webhooks inbox replay: delivery ${done!.id} is pending, not done: replay moves done deliveries only\n`,
    });
    usage(
      await cli('inbox', 'replay', done!.id, ...on(table), '--all'),
      /^rack-webhooks inbox replay: pass an id or filter flags, not both\n$/,
    );
    expect(await cli('inbox', 'replay', ...on(table), '--all')).toEqual({
      code: 0,
      out: 'replayed 0 deliveries (done -> pending)\n',
      err: '',
    });
    const replayed = (await rows(table))[0]!;
    expect(replayed['state']).toBe('pending');
    expect(replayed['replayed_at']).toBeInstanceOf(Date);

    // prune: only done, dead, ignored and duplicate rows received before the cut-off; never a pending one.
    const cut = await cli('inbox', 'prune', ...on(table), '--before', '30d');
    expect(cut.out).toMatch(/^pruned 0 deliveries \(done, dead, ignored or duplicate, received before \d{4}-[\d-]+T[\d:.]+Z\)\n$/);
    await db.query(`UPDATE ${table} SET received_at = now() - interval '40 days' WHERE id IN (2, 4)`);
    expect((await cli('inbox', 'prune', ...on(table), '--before', '30d')).out).toMatch(/^pruned 1 delivery \(/);
    expect((await rows(table)).map((row) => row['id'])).toEqual([1, 2, 3]);
    expect((await cli('inbox', 'prune', ...on(table), '--before', '2026-01-01')).out).toBe(
      'pruned 0 deliveries (done, dead, ignored or duplicate, received before 2026-01-01T00:00:00.000Z)\n',
    );
    usage(await cli('inbox', 'prune', ...on(table)), /^rack-webhooks inbox prune: no --before: pass a date/);
    usage(await cli('inbox', 'prune', ...on(table), '--before', 'last-week'), /--before must be a date .* got "last-week"/);
  });

  it('export writes re-verifiable lines; import stores them again byte for byte, then finds only duplicates', async () => {
    const table = await seeded();
    const file = join(tempDir(), 'deliveries.jsonl');
    expect(await cli('inbox', 'export', ...on(table), '--out', file)).toEqual({
      code: 0,
      out: `exported 4 deliveries to ${file}\n`,
      err: '',
    });
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[4]).toBe('');
    const exported = lines.slice(0, 4).map((line) => JSON.parse(line) as Record<string, string>);
    expect(exported.map((line) => line['body'])).toEqual([...BODIES]);
    expect(exported.map((line) => line['id'])).toEqual(['1', '2', '3', '4']);
    // The one ignored delivery (an unknown action) says so, for import to keep it ignored.
    expect(exported.map((line) => line['state'])).toEqual([undefined, undefined, undefined, 'ignored']);
    for (const line of exported) {
      expect(Object.keys(line)).toEqual(['id', 'received_at', 'signature', ...(line['state'] === undefined ? [] : ['state']), 'body']);
      expect(line['signature']).toMatch(/^t=\d{10},v1=[0-9a-f]{64}$/);
    }

    // To stdout, with a filter; and the bodies alone, in the listen --log format.
    expect(await cli('inbox', 'export', ...on(table), '--action', 'app:create')).toEqual({
      code: 0,
      out: `${lines[0]}\n`,
      err: 'exported 1 delivery\n',
    });
    expect(await cli('inbox', 'export', ...on(table), '--state', 'dead', '--bodies')).toEqual({
      code: 0,
      out: `${BODIES[1]}\n${JSON.stringify(JSON.parse(BODIES[2]))}\n`,
      err: 'exported 2 deliveries\n',
    });

    const copy = newTable('copy');
    expect((await cli('inbox', 'migrate', ...on(copy))).code).toBe(0);
    expect(await cli('inbox', 'import', file, ...on(copy), '--key', KEY)).toEqual({
      code: 0,
      out: '3 accepted, 1 ignored, 0 duplicate, 0 rejected\n',
      err: '',
    });
    const [original, imported] = [await rows(table), await rows(copy)];
    expect(imported.map((row) => row['state'])).toEqual(['pending', 'pending', 'pending', 'ignored']);
    for (const [index, row] of imported.entries()) {
      expect(Buffer.compare(row['body'] as Buffer, Buffer.from(BODIES[index]!))).toBe(0);
      expect(row['body']).toEqual(original[index]!['body']);
      expect(row['signature']).toBe(original[index]!['signature']);
      // The time it was received, not the time it was imported (to the millisecond the export keeps).
      expect((row['received_at'] as Date).getTime()).toBe((original[index]!['received_at'] as Date).getTime());
    }
    expect(await cli('inbox', 'import', file, ...on(copy), '--key', KEY)).toEqual({
      code: 0,
      out: '0 accepted, 0 ignored, 4 duplicate, 0 rejected\n',
      err: '',
    });
    expect(await rows(copy)).toHaveLength(4);

    // A delivery ignored at the source (its `ignore` option) is imported as ignored, not pending.
    const ignoredAtSource = `${lines[0]!.slice(0, -1)},"state":"ignored"}`;
    const again = newTable('again');
    expect((await cli('inbox', 'migrate', ...on(again))).code).toBe(0);
    const ignoredFile = writeTemp(tempDir(), 'ignored.jsonl', `${ignoredAtSource}\n`);
    expect(await cli('inbox', 'import', ignoredFile, ...on(again), '--key', KEY)).toEqual({
      code: 0,
      out: '0 accepted, 1 ignored, 0 duplicate, 0 rejected\n',
      err: '',
    });
    expect((await rows(again)).map((row) => row['state'])).toEqual(['ignored']);
  });

  it('import judges each delivery as of the time it was received, and names each one it refuses', async () => {
    const table = newTable('imported');
    expect((await cli('inbox', 'migrate', ...on(table))).code).toBe(0);
    const body = (day: string) =>
      `{"action":"app:create","status":"success","timestamp":"2026-02-${day}T00:00:00Z","data":{"name":"n${day}","rack":"r","actor":"x"}}`;
    const signedAt = Math.floor(Date.now() / 1000) - 10 * 86_400; // ten days ago
    const receivedThen = new Date(signedAt * 1000 + 1500);
    const forged = JSON.parse(exportLineFor(body('03'), signedAt, receivedThen)) as Record<string, string>;
    const file = join(tempDir(), 'mixed.jsonl');
    writeFileSync(
      file,
      [
        exportLineFor(body('01'), signedAt, receivedThen), // old, received in time: verifies
        exportLineFor(body('02'), signedAt, new Date()), // "received" ten days after it was signed
        JSON.stringify({ ...forged, body: forged['body']!.replace('n03', 'n99') }),
        body('04'), // a listen --log line: the body alone
        '{not json',
        '',
        '{"signature":"t=1,v1=00","body":"{}"}',
        exportLineFor(body('05'), signedAt, receivedThen, 'another-key'),
      ].join('\r\n'),
    );
    const result = await cli('inbox', 'import', file, ...on(table), '--key', KEY);
    expect(result.code).toBe(1);
    expect(result.err).toBe('');
    expect(result.out.split('\n')).toEqual([
      expect.stringMatching(/^line 2: timestamp_too_old: /),
      expect.stringMatching(/^line 3: signature_mismatch: /),
      'line 4: missing_signature: a body without its signature (a listen --log or export --bodies line) cannot be re-verified; import reads inbox export lines',
      'line 5: invalid_line: not JSON',
      'line 7: invalid_line: no "received_at" time',
      expect.stringMatching(/^line 8: signature_mismatch: /),
      '1 accepted, 0 ignored, 0 duplicate, 6 rejected',
      '',
    ]);
    const stored = await rows(table);
    expect(stored).toHaveLength(1);
    expect((stored[0]!['body'] as Buffer).toString()).toBe(body('01'));
    expect((stored[0]!['received_at'] as Date).getTime()).toBe(receivedThen.getTime());

    // --tolerance widens the window around the time received; "-" reads stdin (a real process here).
    const lateLine = `${exportLineFor(body('02'), signedAt, new Date())}\n`;
    expect(
      await run(['inbox', 'import', '-', ...on(table), '--tolerance', 'Infinity'], { stdin: lateLine, env: { RACK_WEBHOOK_SECRETS: KEY } }),
    ).toEqual({
      code: 0,
      stdout: '1 accepted, 0 ignored, 0 duplicate, 0 rejected\n',
      stderr: '',
    });
    const late = join(tempDir(), 'late.jsonl');
    writeFileSync(late, lateLine);
    expect(await cli('inbox', 'import', late, ...on(table), '--key', KEY, '--tolerance', 'Infinity')).toEqual({
      code: 0,
      out: '0 accepted, 0 ignored, 1 duplicate, 0 rejected\n',
      err: '',
    });

    usage(await cli('inbox', 'import', ...on(table), '--key', KEY), /^rack-webhooks inbox import: no file: /);
    usage(await cli('inbox', 'import', late, ...on(table)), /^rack-webhooks inbox import: no key: pass --key/);
    usage(
      await cli('inbox', 'import', join(tempDir(), 'missing.jsonl'), ...on(table), '--key', KEY),
      /cannot read ".*missing.jsonl" \(ENOENT\)/,
    );
    usage(await cli('inbox', 'import', tempDir(), ...on(table), '--key', KEY), /\(EISDIR\)/);
  });

  it('one-line errors: an unreachable server (its password masked), a missing schema, a bad --database or --table', async () => {
    const refused = (await connectionRefusedUrl()).replace('postgres@', 'postgres:s3cret-pw@');
    const unreachable = await cli('inbox', 'list', '--database', refused);
    expect(unreachable.code).toBe(1);
    expect(unreachable.out).toBe('');
    expect(unreachable.err).toMatch(
      /^rack-webhooks inbox list: cannot reach the database at 127\.0\.0\.1:\d+: connect ECONNREFUSED 127\.0\.0\.1:\d+\n$/,
    );
    expect(unreachable.err).not.toContain('s3cret');

    // Trust authentication ignores the password, so this URL connects.
    const url = new URL(POSTGRES_URL);
    url.password = 's3cret-pw';
    const table = `${db.schema}.never_migrated`;
    const missing = await cli('inbox', 'stats', '--database', url.href, '--table', table);
    url.password = '***';
    expect(missing).toEqual({
      code: 1,
      out: '',
      err: `rack-webhooks inbox stats: the database has no inbox table ${table} (or an older schema of it): run rack-webhooks inbox migrate --database ${url.href.replace(/%2A/g, '*')} --table ${table}\n`,
    });
    expect(missing.err).not.toContain('s3cret');
    const noDatabase = new URL(POSTGRES_URL);
    noDatabase.pathname = '/no_such_database_rw';
    expect((await cli('inbox', 'stats', '--database', noDatabase.href)).err).toBe(
      `rack-webhooks inbox stats: cannot reach the database at ${noDatabase.host}: database "no_such_database_rw" does not exist (SQLSTATE 3D000)\n`,
    );

    usage(
      await cli('inbox', 'stats'),
      /^rack-webhooks inbox stats: no database: pass --database <postgres:\/\/ URL \| PGlite directory>\n$/,
    );
    usage(
      await cli('inbox', 'stats', '--database', 'mysql://root:pw@db/x'),
      /must be a postgres:\/\/ or postgresql:\/\/ URL, or a directory for PGlite; got a mysql:\/\/ URL\n$/,
    );
    const malformed = await cli('inbox', 'stats', '--database', 'postgres://u:s3cret@host:port/x');
    usage(malformed, /--database is not a valid postgres:\/\/ URL/);
    expect(malformed.err).not.toContain('s3cret');
    usage(await cli('inbox', 'stats', ...on('bad-name')), /^rack-webhooks inbox stats: --table: table must be a plain SQL identifier/);
  });

  it('a missing optional peer names the package to install (the built CLI, run where neither can be found)', () => {
    const dir = tempDir();
    const isolated = join(dir, 'cli.js');
    copyFileSync(CLI, isolated);
    const runIsolated = (...args: string[]) =>
      spawnSync(process.execPath, [isolated, ...args], { encoding: 'utf8', timeout: 10_000, cwd: dir });
    const viaUrl = runIsolated('inbox', 'list', '--database', 'postgres://postgres:s3cret@127.0.0.1:5432/test');
    expect([viaUrl.status, viaUrl.stdout, viaUrl.stderr]).toEqual([
      1,
      '',
      'rack-webhooks inbox list: a postgres:// URL needs the pg package, which is not installed: run npm install pg\n',
    ]);
    const viaDirectory = runIsolated('inbox', 'migrate', '--database', join(dir, 'db'));
    expect([viaDirectory.status, viaDirectory.stdout, viaDirectory.stderr]).toEqual([
      1,
      '',
      'rack-webhooks inbox migrate: a PGlite directory needs the @electric-sql/pglite package, which is not installed: run npm install @electric-sql/pglite (or pass a postgres:// URL)\n',
    ]);
    expect(existsSync(join(dir, 'db'))).toBe(false); // nothing created for a database that cannot be opened
  });

  it('tells a missing package from a package that fails to load, and masks passwords in messages', async () => {
    const notFound = (name: string) =>
      Object.assign(new Error(`Cannot find package '${name}' imported from /app/dist/cli.js`), { code: 'ERR_MODULE_NOT_FOUND' });
    const target = databaseTarget('postgres://u:p%40ss@db.internal/app?sslpassword=zz', '--database');
    expect(target).toMatchObject({
      kind: 'postgres',
      address: 'db.internal:5432',
      shown: 'postgres://u:***@db.internal/app?sslpassword=***',
    });
    expect(isMissingPackage(notFound('pg'), 'pg')).toBe(true);
    expect(isMissingPackage(notFound('pg-pool'), 'pg')).toBe(false); // pg is there, one of its own dependencies is not
    await expect(loadPeer('pg', target, () => Promise.reject(notFound('pg')))).rejects.toThrow(
      /^a postgres:\/\/ URL needs the pg package, which is not installed: run npm install pg$/,
    );
    await expect(loadPeer('pg', target, () => Promise.reject(notFound('pg-pool')))).rejects.toThrow(
      /^cannot load the pg package: Cannot find package 'pg-pool'/,
    );
    expect(scrub('auth failed for p@ss and p%40ss and zz', target)).toBe('auth failed for *** and *** and ***');
    expect(connectionReason(Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' }))).toBe('ECONNREFUSED');
    expect(connectionReason(Object.assign(new Error('timeout expired'), { code: 'ETIMEDOUT' }))).toBe('ETIMEDOUT: timeout expired');
    expect([850, 42_000, 252_000, 11_100_000, 187_200_000].map(formatAge)).toEqual([
      '850 ms',
      '42 s',
      '4 min 12 s',
      '3 h 5 min',
      '2 d 4 h',
    ]);
  });
});

describe('export lines', () => {
  it('carry any body byte for byte: as text when it is UTF-8 (a BOM kept), else as base64', () => {
    const detail = (body: Uint8Array) =>
      ({ id: '7', receivedAt: new Date(0), signature: 't=1,v1=00', body }) as unknown as Parameters<typeof exportLine>[0];
    for (const body of [Buffer.from('\ufeff{"a":"é"}\r\n'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d])]) {
      const line = exportLine(detail(body));
      expect(line.endsWith('\n') && !line.slice(0, -1).includes('\n')).toBe(true);
      const parsed = parseExportLine(line.trimEnd());
      expect('delivery' in parsed && Buffer.compare(Buffer.from(parsed.delivery.body), body)).toBe(0);
    }
    expect(JSON.parse(exportLine(detail(Buffer.from([0xff]))))).toEqual({
      id: '7',
      received_at: '1970-01-01T00:00:00.000Z',
      signature: 't=1,v1=00',
      body_base64: '/w==',
    });
    const ignored = JSON.parse(exportLine({ ...detail(Buffer.from('{}')), state: 'ignored' } as Parameters<typeof exportLine>[0]));
    expect(Object.keys(ignored)).toEqual(['id', 'received_at', 'signature', 'state', 'body']);
    expect(parseExportLine(JSON.stringify(ignored))).toMatchObject({ delivery: { ignored: true } });
    expect(parseExportLine(JSON.stringify({ ...ignored, state: 'done' }))).toEqual({
      code: 'invalid_line',
      reason: '"state" is "ignored" or absent',
    });
    expect(parseExportLine('[1]')).toEqual({ code: 'invalid_line', reason: 'not a JSON object' });
    expect(parseExportLine('{"signature":"t=1,v1=00","received_at":"2026-01-01T00:00:00Z"}')).toEqual({
      code: 'invalid_line',
      reason: 'no "body" string',
    });
  });
});

describe('listen --inbox', () => {
  it('stores each verified delivery and prints its row id; duplicates and refusals store nothing', async () => {
    const table = newTable('listened');
    const listening = runCli(['listen', '--port', '0', '--key', KEY, '--inbox', POSTGRES_URL, '--table', table]);
    await vi.waitFor(() => expect(writtenSoFar().stdout).toMatch(/listening on /), { timeout: 10_000 });
    const url = /listening on (\S+)/.exec(writtenSoFar().stdout)![1]!;
    expect(writtenSoFar().stdout).toContain(
      `storing deliveries in ${table} at ${POSTGRES_URL} (schema version ${LATEST_VERSION}); no handlers run here\n`,
    );
    const post = async (request: ReturnType<typeof createSignedRequestSync>) => {
      const response = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
      return [response.status, await response.text()];
    };
    // Signed once and sent twice: the same t and body, so the same delivery.
    const first = createSignedRequestSync(BODIES[0], { secrets: KEY });
    expect(await post(first)).toEqual([200, '{"status":"accepted"}']);
    expect(await post(first)).toEqual([200, '{"status":"duplicate"}']);
    expect(await post(createSignedRequestSync(BODIES[3], { secrets: KEY }))).toEqual([200, '{"status":"ignored"}']);
    expect(await post(createSignedRequestSync(BODIES[1], { secrets: 'wrong-key' }))).toEqual([401, '{"error":"signature_mismatch"}']);
    const out = writtenSoFar().stdout;
    expect(out).toMatch(/\d {2}accepted {3}app:create {2}app=alpha {2}tick_id=- {2}id=1\n/);
    expect(out).toMatch(/\d {2}duplicate {2}app:create {2}app=alpha {2}tick_id=- {2}id=-\n/);
    // The duplicate's INSERT ... ON CONFLICT DO NOTHING used up id 2: PostgreSQL identities have gaps.
    expect(out).toMatch(/\d {2}ignored {4}app:from-the-future {2}app=beta {2}tick_id=- {2}id=3\n/);
    expect(out).toMatch(/\d {2}401 signature_mismatch: /);
    process.emit('SIGTERM');
    expect(await listening).toBe(0);
    const stored = await rows(table);
    expect(stored.map((row) => [row['id'], row['state'], (row['body'] as Buffer).toString()])).toEqual([
      [1, 'pending', BODIES[0]],
      [3, 'ignored', BODIES[3]],
    ]);
  });

  it('refuses --inbox with --log, --table without --inbox, and an unreachable database', async () => {
    usage(
      await cli('listen', '--port', '0', '--key', KEY, '--inbox', POSTGRES_URL, '--log', join(tempDir(), 'log')),
      /^rack-webhooks listen: pass --inbox or --log, not both/,
    );
    usage(await cli('listen', '--port', '0', '--key', KEY, '--table', 'x'), /^rack-webhooks listen: --table goes with --inbox\n$/);
    const refused = await cli('listen', '--port', '0', '--key', KEY, '--inbox', await connectionRefusedUrl());
    expect(refused).toEqual({
      code: 1,
      out: '',
      err: expect.stringMatching(/^rack-webhooks listen: cannot reach the database at 127\.0\.0\.1:\d+: connect ECONNREFUSED/),
    });
  });
});

describe('inbox on a PGlite directory', () => {
  it('migrate creates it, import fills it, the readers read it, and reach it through listen while it owns the directory', async () => {
    const dir = join(tempDir(), 'inbox-db');
    expect(await cli('inbox', 'list', '--database', dir)).toEqual({
      code: 1,
      out: '',
      err: `rack-webhooks inbox list: no PGlite database in ${dir}: create it with rack-webhooks inbox migrate --database ${dir}\n`,
    });
    expect(existsSync(dir)).toBe(false);
    expect(await cli('inbox', 'migrate', '--database', dir)).toEqual({
      code: 0,
      out: `rack_webhooks_inbox: ${APPLIED_ALL}\n`,
      err: `rack-webhooks: created ${dir} for a new PGlite database\n`,
    });
    expect(await cli('inbox', 'migrate', '--database', dir)).toEqual({
      code: 0,
      out: `rack_webhooks_inbox: nothing to apply; schema version ${LATEST_VERSION}\n`,
      err: '',
    });

    const now = Math.floor(Date.now() / 1000);
    const file = join(tempDir(), 'export.jsonl');
    writeFileSync(file, BODIES.map((body) => `${exportLineFor(body, now, new Date(now * 1000))}\n`).join(''));
    expect(await cli('inbox', 'import', file, '--database', dir, '--key', KEY)).toEqual({
      code: 0,
      out: '3 accepted, 1 ignored, 0 duplicate, 0 rejected\n',
      err: '',
    });
    expect(await cli('inbox', 'list', '--database', dir)).toEqual({
      code: 0,
      err: '',
      out: [
        'ID  STATE    ATTEMPTS  EVENT TIME                      ACTION               APP',
        '1   pending  0         2026-01-01T00:00:00.000000001Z  app:create           alpha',
        '2   pending  0         2026-01-02T00:00:00Z            app:budget:cap       alpha',
        '3   pending  0         2026-01-03T00:00:00Z            app:budget:cap       beta',
        '4   ignored  0         2026-01-04T00:00:00Z            app:from-the-future  beta',
        '',
      ].join('\n'),
    });
    expect(JSON.parse((await cli('inbox', 'show', '3', '--database', dir, '--json')).out)).toMatchObject({
      id: '3',
      body: BODIES[2],
      receivedAt: new Date(now * 1000).toISOString(),
    });
    expect(await cli('inbox', 'stats', '--database', dir, '--table', 'elsewhere')).toEqual({
      code: 1,
      out: '',
      err: `rack-webhooks inbox stats: the database has no inbox table elsewhere (or an older schema of it): run rack-webhooks inbox migrate --database ${dir} --table elsewhere\n`,
    });

    // A real second process owns the directory: another command reaches its data through it.
    const listener = await startListener(['--key', KEY, '--inbox', dir]);
    const request = createSignedRequestSync(
      '{"action":"app:create","status":"success","timestamp":"2026-01-05T00:00:00Z","data":{"name":"gamma","rack":"r","actor":"x"}}',
      { secrets: KEY },
    );
    expect((await fetch(listener.url, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
    await listener.waitForLine(/ {2}accepted {3}app:create {2}app=gamma {2}tick_id=- {2}id=5$/);
    const sockets = () => readdirSync(dir).filter((name) => /^\.s\.PGSQL\.\d+$/.test(name));
    expect(sockets()).toEqual(['.s.PGSQL.1']);
    expect(await cli('inbox', 'stats', '--database', dir)).toMatchObject({
      code: 0,
      err: '',
      out: expect.stringMatching(/\ntotal {6}5\n/),
    });
    expect(await listener.stop()).toBe(0);
    expect(sockets()).toEqual([]); // the owner's clean stop took its socket with it

    // A socket left by an owner that was killed refuses connections: the next command owns the directory.
    const killed = spawnSync(
      process.execPath,
      [
        '-e',
        `require('node:net').createServer().listen(${JSON.stringify(join(dir, '.s.PGSQL.7'))}, () => process.kill(process.pid, 'SIGKILL'))`,
      ],
      { encoding: 'utf8' },
    );
    expect(killed.signal).toBe('SIGKILL');
    expect(sockets()).toEqual(['.s.PGSQL.7']);
    expect(await cli('inbox', 'stats', '--database', dir)).toMatchObject({
      code: 0,
      err: '',
      out: expect.stringMatching(/\ntotal {6}5\n/),
    });
    expect(sockets()).toEqual([]);
  }, 90_000);

  it('refuses a host, a URL without its scheme or a variable name as a directory, creating nothing', async () => {
    const cwd = process.cwd();
    process.chdir(tempDir());
    try {
      for (const [value, reason] of [
        [
          '127.0.0.1:5432/db',
          /^--database "127\.0\.0\.1:5432\/db" looks like a host and port without a scheme: write postgres:\/\/127\.0\.0\.1:5432\/db /,
        ],
        ['db.internal:5432', /looks like a host and port without a scheme: write postgres:\/\/db\.internal:5432 /],
        ['[::1]:5432/app', /looks like a host and port/],
        // Refused like host:port/db (issue 38, point 7): PGlite made a directory localhost/test.
        [
          'localhost/test',
          /^--database "localhost\/test" looks like a host and database without a scheme: write postgres:\/\/localhost\/test /,
        ],
        ['127.0.0.1/app', /looks like a host and database without a scheme: write postgres:\/\/127\.0\.0\.1\/app /],
        ['localhost', /looks like a host and database without a scheme/],
        ['u:s3cret@db.internal/app', /^--database looks like a database URL without its scheme: put postgres:\/\/ in front of it/],
        [
          'DATABASE_URL',
          /^--database "DATABASE_URL" is the name of an environment variable, not its value: write --database "\$DATABASE_URL"/,
        ],
        ['${INBOX_URL}', /is the name of an environment variable, not its value: write --database "\$INBOX_URL"/],
        ['%DATABASE_URL%', /write --database "\$DATABASE_URL"/],
      ] as const) {
        expect(() => databaseTarget(value, '--database'), value).toThrow(reason);
        const result = await cli('inbox', 'migrate', '--database', value);
        expect(result.code, value).toBe(2);
        expect(result.err, value).not.toContain('s3cret');
        expect(readdirSync('.'), value).toEqual([]);
      }
      // What stays a directory: paths, a drive letter, a variable-like name that already is a directory.
      for (const value of [
        './inbox-data',
        'inbox-data',
        'C:/inbox',
        '/var/lib/inbox:old',
        'data/INBOX_DATA',
        'localhost-data',
        './localhost/test',
      ]) {
        expect(databaseTarget(value, '--database').kind, value).toBe('pglite');
      }
      const host = fc.oneof(
        fc.domain(),
        fc.ipV4(),
        fc.ipV6().map((ip) => `[${ip}]`),
      );
      const password = fc.stringMatching(/^[A-Za-z0-9]{6,20}$/);
      fc.assert(
        fc.property(host, fc.integer({ min: 1, max: 65_535 }), password, (name, port, secret) => {
          expect(() => databaseTarget(`${name}:${port}/app`, '--database')).toThrow(/without a scheme/);
          expect(() => databaseTarget(`u:${secret}@${name}:${port}/app`, '--database')).toThrow(
            expect.objectContaining({ message: expect.not.stringContaining(secret) as string }),
          );
        }),
      );
      mkdirSync('INBOX_DATA');
      expect(databaseTarget('INBOX_DATA', '--database').kind).toBe('pglite');
    } finally {
      process.chdir(cwd);
    }
  });

  it('refuses a path that is a file, or a directory that holds something else', async () => {
    const dir = tempDir();
    const other = join(dir, 'project');
    mkdirSync(other);
    writeFileSync(join(other, 'notes.txt'), 'mine');
    usage(
      await cli('inbox', 'migrate', '--database', other),
      /^rack-webhooks inbox migrate: .*project is neither a PGlite database nor empty: pass a new or empty directory/,
    );
    expect(existsSync(join(other, 'PG_VERSION'))).toBe(false);
    usage(
      await cli('inbox', 'stats', '--database', join(other, 'notes.txt')),
      /notes\.txt is a file: pass a directory for PGlite, or a postgres:\/\/ URL/,
    );
  });
});

describe('inbox usage', () => {
  it('lists the subcommands, helps with each, and suggests the nearest name', async () => {
    expect((await cli('--help')).out).toMatch(
      /\n {2}inbox {4}operate a durable inbox: list, show, stats, health, retry, replay, prune, export, import, migrate, forward, reconcile\n/,
    );
    const bare = await cli('inbox');
    expect(bare.code).toBe(2);
    expect(bare.err).toMatch(/^Usage: rack-webhooks inbox <subcommand> --database/);
    expect(bare.err).toMatch(/\n {2}import {5}store the deliveries of an export/);
    expect(await cli('inbox', '--help')).toEqual({ code: 0, out: bare.err, err: '' });
    expect((await cli('inbox', 'help', 'prune')).out).toMatch(/^Usage: rack-webhooks inbox prune --before/);
    expect((await cli('help', 'inbox', 'show')).out).toMatch(/^Usage: rack-webhooks inbox show <id>/);
    expect((await cli('inbox', 'list', '--help')).out).toMatch(/^Usage: rack-webhooks inbox list[\s\S]*--state S[\s\S]*--after CURSOR/);
    expect((await cli('listen', '--help')).out).toMatch(/It runs no handlers \(it has none\)[\s\S]*--inbox D/);
    expect(await cli('inbox', 'lst')).toEqual({
      code: 2,
      out: '',
      err: 'rack-webhooks inbox: unknown subcommand "lst"; did you mean "list"? (rack-webhooks inbox --help lists them)\n',
    });
  });
});
