/**
 * reconcile(inbox, client, { record: true }) end to end, on PostgreSQL (pg) and PGlite: the
 * emulator's rack delivers to a real receiver and inbox, the test drops chosen deliveries, and
 * recording must store exactly the proven ones as marked, unsigned rows that a worker runs once
 * (`context.delivery.origin === 'reconciled'`); a late real arrival is their duplicate and runs
 * nothing; recording again, or twice at once, stores nothing new; two distinct `:failed` events
 * under one tick_id stay two.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { reconcile } from '../../src/reconcile/reconcile.js';
import { createTestEvent } from '../../src/testing/test-event.js';
import type { WebhookAction } from '../../src/events/types.js';
import { openDatabase, type ClientKind, type TestDatabase } from '../inbox/databases.js';
import { ago, HOUR, startScenario, type Scenario } from './scenario.js';

const SHUTDOWN = 'app:budget:auto-shutdown:';

interface Run {
  readonly action: string;
  readonly deliveryId: string;
  readonly origin: string;
}

describe.each(['pg', 'pglite'] as const satisfies readonly ClientKind[])('reconcile --record on %s', (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await openDatabase(kind);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
  });
  const open: Scenario[] = [];
  const workers: { stop(options: { timeoutMs: number }): Promise<unknown> }[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop({ timeoutMs: 5000 })));
    await Promise.all(open.splice(0).map((scenario) => scenario.close()));
  });

  it('stores exactly the proven missing events, marked, and a worker runs each once as reconciled', { timeout: 120_000 }, async () => {
    const scenario = await startScenario(db);
    open.push(scenario);
    const { rack, inbox, client, receiver, table } = scenario;
    const runs: Run[] = [];
    receiver.onAny((event, context) => {
      runs.push({ action: event.action, deliveryId: context!.delivery.id, origin: context!.delivery.origin });
    });
    const api = rack.api;
    await api.createApp('web', { at: ago(72 * HOUR) });
    await api.createApp('api', { at: ago(72 * HOUR) });
    const lostRelease = await api.build('web', { at: ago(10 * HOUR), drop: ['release:create'] });
    const failed = await api.build('web', { at: ago(9 * HOUR), outcome: 'failed', drop: true });
    const lostBuild = await api.build('web', { at: ago(8 * HOUR), drop: ['build:create'] });
    await api.build('web', { at: ago(7 * HOUR) }); // nothing dropped
    await api.budgetAlert('web', 'threshold', { at: ago(6 * HOUR), drop: true });
    const tick = await api.autoShutdown('api', 'armed', { at: ago(5 * HOUR) });
    await api.autoShutdown('api', 'failed', { at: ago(4 * HOUR), drop: true, failureReason: 'admission-rejected' });

    const report = await reconcile(inbox, client(), { since: ago(24 * HOUR), record: true });

    const recorded = new Map(report.gaps.map((gap) => [`${gap.action} ${gap.id}`, gap.recorded?.id]));
    expect([...recorded.keys()].sort()).toEqual(
      [
        `release:create ${lostRelease.release!.id}`,
        `build:create ${failed.build.id}`,
        `build:create ${lostBuild.build.id}`,
        `app:budget:threshold ${report.gaps.find((gap) => gap.action === 'app:budget:threshold')!.id}`,
        `${SHUTDOWN}failed ${tick}`,
      ].sort(),
    );
    // A budget alert has no key a late arrival could be matched on: reported, not recorded.
    expect(report.gaps.find((gap) => gap.action === 'app:budget:threshold')!.recorded).toBeUndefined();
    const ids = report.gaps.flatMap((gap) => (gap.recorded === undefined ? [] : [gap.recorded.id]));
    expect(ids).toHaveLength(4);

    // In the table: exactly those, marked, unsigned, pending, with their evidence.
    const rows = await db.query<{ id: string; state: string; signature: string; evidence: string; action: string }>(
      `SELECT id::text AS id, state, signature, evidence::text AS evidence, action FROM ${table} WHERE origin = 'reconciled' ORDER BY id`,
    );
    expect(rows.map((row) => row.id).sort()).toEqual([...ids].sort());
    for (const row of rows) {
      expect(row).toMatchObject({ state: 'pending', signature: '' });
      const gap = report.gaps.find((candidate) => candidate.recorded?.id === row.id)!;
      expect(JSON.parse(row.evidence)).toEqual(gap.evidence);
    }
    expect(await db.query(`SELECT 1 FROM ${table} WHERE origin = 'received' AND evidence IS NOT NULL`)).toEqual([]);

    // get() and list() say where each row came from; the body holds what the records give.
    const buildRow = await inbox.get(recorded.get(`build:create ${lostBuild.build.id}`)!);
    expect(buildRow).toMatchObject({ origin: 'reconciled', state: 'pending', signature: '', action: 'build:create', app: 'web' });
    expect(buildRow!.evidence).toEqual({
      route: '/apps/web/builds?limit=50',
      field: 'status',
      value: 'complete',
      at: lostBuild.build.ended,
    });
    expect(buildRow!.event).toMatchObject({
      action: 'build:create',
      status: 'success',
      timestamp: lostBuild.build.ended,
      data: { app: 'web', id: lostBuild.build.id, release_id: lostBuild.release!.id, actor: 'unknown' },
    });
    const failedRow = await inbox.get(recorded.get(`${SHUTDOWN}failed ${tick}`)!);
    expect(failedRow!.event).toMatchObject({
      action: `${SHUTDOWN}failed`,
      status: 'success',
      data: { app: 'api', tick_id: tick, failure_reason: 'admission-rejected', schema_version: '1', dry_run: 'false' },
    });
    expect((failedRow!.event!.data as Record<string, string>)['failed_at']).toBe(failedRow!.evidence!.at);
    expect((await inbox.get(recorded.get(`build:create ${failed.build.id}`)!))!.event).toMatchObject({ status: 'error' });
    const listed = (await inbox.list({ limit: 1000 })).deliveries;
    expect(
      listed
        .filter((delivery) => delivery.origin === 'reconciled')
        .map((delivery) => delivery.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(listed.filter((delivery) => delivery.origin === 'received').every((delivery) => delivery.evidence === null)).toBe(true);

    // The app's worker runs each reconstructed delivery once, and its handlers can tell.
    workers.push(inbox.work(receiver, { pollIntervalMs: 50 }));
    await vi.waitFor(
      async () => {
        const states = await db.query<{ state: string }>(`SELECT state FROM ${table} WHERE origin = 'reconciled'`);
        expect(states.map((row) => row.state)).toEqual(['done', 'done', 'done', 'done']);
      },
      { timeout: 30_000, interval: 50 },
    );
    for (const id of ids) expect(runs.filter((run) => run.deliveryId === id)).toEqual([expect.objectContaining({ origin: 'reconciled' })]);
    expect(runs.filter((run) => run.origin === 'received').length).toBeGreaterThan(0);
    expect(runs.filter((run) => run.origin === 'received' && ids.includes(run.deliveryId))).toEqual([]);

    // A late real arrival of a recorded event is its duplicate: stored, no handler run.
    const lateRelease = await receive(scenario, 'release:create', { app: 'web', id: lostRelease.release!.id });
    const lateFailed = await receive(
      scenario,
      `${SHUTDOWN}failed`,
      api.dropped.find((event) => event.action === `${SHUTDOWN}failed`)!.data,
    );
    expect(lateRelease).toMatchObject({
      origin: 'received',
      state: 'duplicate',
      duplicateOf: recorded.get(`release:create ${lostRelease.release!.id}`),
    });
    expect(lateFailed).toMatchObject({ origin: 'received', state: 'duplicate', duplicateOf: recorded.get(`${SHUTDOWN}failed ${tick}`) });
    // A distinct :failed under the same tick_id (a failed restore during a reset: a later failed_at) is its own event.
    await api.autoShutdown('api', 'failed', { at: ago(HOUR), failureReason: 'k8s-api-failure' });
    const second = (await inbox.list({ action: `${SHUTDOWN}failed`, state: ['pending', 'running', 'done'], limit: 10 })).deliveries.filter(
      (delivery) => delivery.origin === 'received',
    );
    expect(second).toHaveLength(1);
    await vi.waitFor(async () => expect((await inbox.get(second[0]!.id))!.state).toBe('done'), { timeout: 30_000, interval: 50 });
    expect(runs.filter((run) => run.action === `${SHUTDOWN}failed`).map((run) => run.deliveryId)).toEqual([
      recorded.get(`${SHUTDOWN}failed ${tick}`),
      second[0]!.id,
    ]);
    expect(runs.filter((run) => run.deliveryId === lateRelease.id || run.deliveryId === lateFailed.id)).toEqual([]);
    expect((await inbox.get(lateRelease.id))!.state).toBe('duplicate');

    // Recording again stores nothing: the reconstructed rows are held; only the unrecordable alert is still missing.
    const again = await reconcile(inbox, client(), { since: ago(24 * HOUR), record: true });
    expect(again.gaps.map((gap) => gap.action)).toEqual(['app:budget:threshold']);
    expect(await db.query(`SELECT id FROM ${table} WHERE origin = 'reconciled'`)).toHaveLength(4);
  });

  it('two reconciles recording at once store one row, and both report it', { timeout: 60_000 }, async () => {
    const scenario = await startScenario(db);
    open.push(scenario);
    const { rack, inbox, client, table } = scenario;
    await rack.api.createApp('web', { at: ago(48 * HOUR) });
    const lost = await rack.api.changeEnv('web', { at: ago(2 * HOUR), drop: true });
    const [first, second] = await Promise.all([
      reconcile(inbox, client(), { since: ago(24 * HOUR), record: true }),
      reconcile(inbox, client(), { since: ago(24 * HOUR), record: true }),
    ]);
    const rows = await db.query<{ id: string }>(`SELECT id::text AS id FROM ${table} WHERE origin = 'reconciled'`);
    expect(rows).toHaveLength(1);
    // Each either found the gap and reports the one row (recorded by it or by the other), or, when the
    // other had recorded it before this one read the inbox (a loaded machine), found it held: no gap.
    const recordedGap = [expect.objectContaining({ action: 'release:create', id: lost.id, recorded: { id: rows[0]!.id } })];
    for (const report of [first, second])
      expect(report.gaps.length === 0 ? [] : report.gaps).toEqual(report.gaps.length === 0 ? [] : recordedGap);
    expect(first.gaps.length + second.gaps.length).toBeGreaterThanOrEqual(1);
  });
});

/** The rack's real delivery of an event, arriving late (sent now, signed now), and the row it made. */
async function receive(scenario: Scenario, action: string, data: Readonly<Record<string, string>>) {
  const before = new Set((await scenario.inbox.list({ limit: 1000 })).deliveries.map((delivery) => delivery.id));
  await scenario.rack.dispatch(createTestEvent(action as WebhookAction, { data: data as never }));
  const added = (await scenario.inbox.list({ limit: 1000 })).deliveries.filter((delivery) => !before.has(delivery.id));
  expect(added).toHaveLength(1);
  return added[0]!;
}
