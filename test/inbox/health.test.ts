// Worker heartbeats, inbox.health() and its statuses: a heartbeat row and an unmigrated table on
// every client, the rest as scenarios (on pg); a SIGKILLed worker process shown as gone on
// PostgreSQL. Refusal counting has its own file (refusals.test.ts).
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { setUp } from '../kit/setup.js';
import { createInbox, type InboxHealth } from '../../src/inbox.js';
import { LATEST_VERSION } from '../../src/inbox/schema/migrations.js';
import { CLIENT_KINDS, connectionRefusedUrl, openDatabase, pgPoolTo, POSTGRES_URL, scenarioIt } from './databases.js';
import { killAllChildren, killChild, startChild, waitFor } from './fixtures/children.js';
import { at, budgetEvent, openInbox, sign, UNREACHABLE_CHECKS } from './helpers.js';

// PGlite's first boot, with room for a machine shared by several suites.
setUp();
afterEach(killAllChildren);

const FIRED = 'app:budget:auto-shutdown:fired';
const BEAT_MS = 1000;

/** The fields a test compares: everything but times and the worker list. */
function verdict(health: InboxHealth) {
  return { status: health.status, ok: health.ok, reasons: health.reasons };
}

describe.each(CLIENT_KINDS)('worker heartbeats (%s)', (kind) => {
  const scenario = scenarioIt(kind);
  it('a worker announces itself with its host, pid and options, beats, and leaves on stop()', async () => {
    const harness = await openInbox(kind);
    // Live means seen within 3 beats: a 50 ms beat left 150 ms between the beat seen and workers()'s
    // query, which PGlite at load 14 missed (live: false). 1 s beats leave 3 s, and the second beat
    // still comes within the wait.
    const worker = harness.work(harness.receiver(), { workerId: 'beat-1', heartbeatMs: BEAT_MS, concurrency: 1 });
    const row = await waitFor(
      async () => (await harness.db.query(`SELECT * FROM ${harness.table}_workers`))[0],
      10_000,
      () => 'the heartbeat row',
    );
    expect(row).toMatchObject({ id: 'beat-1', pid: process.pid, beat_ms: BEAT_MS, concurrency: 1, mode: 'none', running: 0 });
    expect(typeof row['host']).toBe('string');
    expect(String(row['host'])).not.toBe('');
    // It beats: last_seen_at moves while started_at stays.
    const first = row['last_seen_at'] as Date;
    const later = await waitFor(
      async () => {
        const [again] = await harness.db.query<{ last_seen_at: Date; started_at: Date }>(`SELECT * FROM ${harness.table}_workers`);
        return again !== undefined && again.last_seen_at.getTime() > first.getTime() ? again : undefined;
      },
      10_000,
      () => 'a second beat',
    );
    expect(later.started_at).toEqual(row['started_at']);
    const [listed] = await harness.inbox.workers();
    expect(listed).toMatchObject({ id: 'beat-1', pid: process.pid, heartbeatMs: BEAT_MS, concurrency: 1, order: 'none', live: true });
    expect(listed!.startedAt).toBeInstanceOf(Date);

    await worker.stop();
    expect(await harness.db.query(`SELECT * FROM ${harness.table}_workers`)).toEqual([]);
    expect(await harness.inbox.workers()).toEqual([]);
  });

  scenario('a worker that missed 3 beats is listed as gone; health() counts it so', async () => {
    const harness = await openInbox(kind);
    harness.work(harness.receiver(), { workerId: 'live-1' });
    await waitFor(
      async () => (await harness.inbox.workers()).length === 1,
      10_000,
      () => 'the live worker',
    );
    // What a killed worker leaves: a row nobody moves (its own beat is 5 s, last seen a minute ago).
    await harness.db.query(
      `INSERT INTO ${harness.table}_workers (id, host, pid, beat_ms, concurrency, mode, last_seen_at, started_at)
       VALUES ('stale-1', 'elsewhere', 4242, 5000, 4, 'per-app', now() - interval '1 minute', now() - interval '1 hour')`,
    );
    const workers = await harness.inbox.workers();
    expect(workers.map((w) => [w.id, w.live, w.order])).toEqual([
      ['live-1', true, 'none'],
      ['stale-1', false, 'per-app'],
    ]);
    const health = await harness.inbox.health();
    expect(health.workers).toMatchObject({ live: 1, gone: 1 });
    expect(verdict(health)).toEqual({ status: 'ok', ok: true, reasons: [] });
  });

  scenario('rejects a heartbeatMs that is not a whole number >= 1', async () => {
    const harness = await openInbox(kind);
    for (const heartbeatMs of [0, -1, 1.5, Number.NaN]) {
      expect(() => harness.inbox.work(harness.receiver(), { heartbeatMs }), String(heartbeatMs)).toThrow(RangeError);
    }
  });
});

describe.each(CLIENT_KINDS)('inbox.health() (%s)', (kind) => {
  const scenario = scenarioIt(kind);
  it('never migrated: unhealthy, schema version null, and readiness says so', async () => {
    const harness = await openInbox(kind, { migrate: false });
    const health = await harness.inbox.health();
    expect(health).toMatchObject({
      status: 'unhealthy',
      ok: false,
      database: { reachable: true },
      schema: { version: null, expected: LATEST_VERSION, current: false, newerThanPackage: false },
      stats: null,
    });
    expect(health.reasons).toEqual([
      `the inbox table ${harness.table} was never migrated: run inbox.migrate() or rack-webhooks inbox migrate`,
    ]);
    expect(await harness.inbox.readiness()).toEqual({
      ready: false,
      reasons: health.reasons,
      checks: { database: 'ok', schema: 'failing' },
    });
  });

  scenario(
    'goes from warning (no worker) to ok (a live worker), unhealthy (pending, no worker), and names dead, refusals and age',
    async () => {
      const harness = await openInbox(kind);
      const receiver = harness.receiver();
      let health = await harness.inbox.health();
      expect(verdict(health)).toEqual({
        status: 'warning',
        ok: true,
        reasons: ['no worker is running: new deliveries will wait until one starts'],
      });
      expect(health).toMatchObject({
        database: { reachable: true },
        schema: { version: LATEST_VERSION, current: true, newerThanPackage: false },
        workers: { live: 0, gone: 0, list: [] },
        oldestPendingAgeMs: null,
        dead: 0,
        refusalsLastHour: { total: 0, byCode: [] },
      });
      expect(await harness.inbox.readiness()).toEqual({ ready: true, reasons: [], checks: { database: 'ok', schema: 'ok' } });

      // Two deliveries waiting, nobody to run them.
      await harness.deliver(receiver, budgetEvent(FIRED, at('.1'), { tick_id: 'tick-1' }));
      await harness.deliver(receiver, budgetEvent(FIRED, at('.2'), { tick_id: 'tick-2' }));
      health = await harness.inbox.health();
      expect(verdict(health)).toEqual({ status: 'unhealthy', ok: false, reasons: ['2 deliveries waiting and no worker is running'] });
      expect(health.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
      // Past the bound on the age of the oldest pending delivery too.
      await harness.db.query(`UPDATE ${harness.table} SET received_at = now() - interval '20 minutes'`);
      health = await harness.inbox.health({ maxPendingAgeMs: 60_000 });
      expect(health.reasons).toEqual([
        '2 deliveries waiting and no worker is running',
        'the oldest pending delivery has waited 20 min (more than 60 s)',
      ]);
      expect(health.checks).toEqual({
        database: 'ok',
        schema: 'ok',
        workers: 'failing',
        backlog: 'failing',
        dead: 'ok',
        refusals: 'ok',
        gaps: 'ok',
      });

      // A worker runs them; one fails for good (dead); a forged delivery is refused and counted.
      receiver.on(FIRED, (event) => {
        if (event.data.tick_id === 'tick-2') throw new Error('boom');
      });
      harness.work(receiver, { maxAttempts: 1 });
      await harness.settle();
      await waitFor(
        async () => (await harness.inbox.workers()).length === 1,
        10_000,
        () => 'the worker row',
      );
      const forged = sign(budgetEvent(FIRED, at('.3')), { secrets: 'not-a-configured-secret' });
      await expect(receiver.receive({ body: forged.bytes, headers: forged.headers })).rejects.toMatchObject({ code: 'signature_mismatch' });
      await harness.inbox.close(); // writes the counted refusal now
      health = await harness.inbox.health();
      expect(verdict(health)).toEqual({
        status: 'warning',
        ok: true,
        reasons: ['1 dead delivery: retry with inbox.retry() once fixed', '1 refused delivery in the last hour (signature_mismatch 1)'],
      });
      expect(health.checks).toEqual({
        database: 'ok',
        schema: 'ok',
        workers: 'ok',
        backlog: 'ok',
        dead: 'warning',
        refusals: 'warning',
        gaps: 'ok',
      });
      expect(health).toMatchObject({
        workers: { live: 1, gone: 0 },
        oldestPendingAgeMs: null,
        dead: 1,
        refusalsLastHour: { total: 1, byCode: [{ code: 'signature_mismatch', count: 1 }] },
        stats: { done: 1, dead: 1, pending: 0, total: 2 },
      });
    },
  );

  scenario('a schema newer than the package is a warning, and ready; an older one is unhealthy, and not ready', async () => {
    const harness = await openInbox(kind);
    harness.work(harness.receiver());
    await waitFor(
      async () => (await harness.inbox.workers()).length === 1,
      10_000,
      () => 'the worker row',
    );
    const newer = LATEST_VERSION + 2;
    await harness.db.query(`INSERT INTO ${harness.table}_migrations (version, name) VALUES ($1, 'from a newer package')`, [newer]);
    let health = await harness.inbox.health();
    expect(health.schema).toEqual({ version: newer, expected: LATEST_VERSION, current: false, newerThanPackage: true });
    expect(verdict(health)).toEqual({
      status: 'warning',
      ok: true,
      reasons: [`the schema is at version ${newer}, newer than this package's ${LATEST_VERSION}: upgrade rack-webhooks in this process`],
    });
    expect(health.checks).toMatchObject({ database: 'ok', schema: 'warning' });
    expect(await harness.inbox.readiness()).toEqual({ ready: true, reasons: [], checks: { database: 'ok', schema: 'warning' } });

    await harness.db.query(`DELETE FROM ${harness.table}_migrations WHERE version >= $1`, [LATEST_VERSION]);
    health = await harness.inbox.health();
    expect(health.schema).toMatchObject({ version: LATEST_VERSION - 1, current: false, newerThanPackage: false });
    expect(verdict(health)).toEqual({
      status: 'unhealthy',
      ok: false,
      reasons: [
        `the schema is at version ${LATEST_VERSION - 1}, this package needs ${LATEST_VERSION}: run inbox.migrate() or rack-webhooks inbox migrate`,
      ],
    });
    expect(await harness.inbox.readiness()).toEqual({
      ready: false,
      reasons: health.reasons,
      checks: { database: 'ok', schema: 'failing' },
    });
  });
});

describe('inbox.health() when the database cannot be reached', () => {
  it('resolves status unreachable (it does not reject), with the reason, and readiness is false', async () => {
    const pool = pgPoolTo(await connectionRefusedUrl());
    try {
      const inbox = createInbox({ database: pool });
      const health = await inbox.health();
      expect(health).toMatchObject({ status: 'unreachable', ok: false, database: { reachable: false }, stats: null });
      expect(health.reasons).toHaveLength(1);
      expect(health.reasons[0]).toMatch(/^The inbox database could not be reached while checking health: .*ECONNREFUSED/);
      expect(health.checks).toEqual(UNREACHABLE_CHECKS);
      expect(await inbox.readiness()).toMatchObject({ ready: false, checks: { database: 'failing', schema: 'unknown' } });
    } finally {
      await pool.end();
    }
  });
});

describe('a worker process killed with SIGKILL', () => {
  it('is shown as gone once it missed 3 beats, and its row stays', { timeout: 60_000 }, async () => {
    const db = await openDatabase('pg');
    try {
      const inbox = createInbox({ database: db.database, table: db.table });
      await inbox.migrate();
      const effects = `${db.schema}.effects`;
      await db.query(`CREATE TABLE ${effects} (delivery_id bigint NOT NULL, worker text NOT NULL)`);
      const env = {
        RWT_DATABASE_URL: POSTGRES_URL,
        RWT_TABLE: db.table,
        RWT_SECRET: randomBytes(16).toString('hex'),
        RWT_EFFECTS: effects,
        RWT_WORK: JSON.stringify({ workerId: 'doomed', heartbeatMs: 100, pollIntervalMs: 100 }),
      };
      const child = startChild('work.mjs', env);
      const live = await waitFor(
        async () => (await inbox.workers()).find((worker) => worker.id === 'doomed' && worker.live),
        30_000,
        () => 'the child worker to beat',
      );
      expect(live.pid).toBe(child.process.pid);
      await killChild(child);
      const gone = await waitFor(
        async () => (await inbox.workers()).find((worker) => worker.id === 'doomed' && !worker.live),
        30_000,
        () => 'the killed worker to show as gone',
      );
      expect(gone).toMatchObject({ id: 'doomed', pid: child.process.pid, live: false });
      expect((await inbox.health()).workers).toMatchObject({ live: 0, gone: 1 });
    } finally {
      await killAllChildren();
      await db.close();
    }
  });
});
