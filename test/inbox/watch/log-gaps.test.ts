import { describe, expect, it, onTestFinished } from 'vitest';
import { setUp } from '../../kit/setup.js';
import { startConsole } from '../../../src/console/server/start-console.js';
import { httpAlertSink } from '../../../src/inbox.js';
import { composeInbox } from '../../../src/inbox/create-inbox.js';
import { createTestEvent, rackTickId, rackTimestamp } from '../../../src/testing/index.js';
import { captureOutput, cli } from '../../cli/inbox-helpers.js';
import { fakeAssets, SCHEMAS } from '../../console/console-fixture.js';
import { POSTGRES_URL } from '../databases.js';
import { openInbox } from '../helpers.js';
import { alertEndpoint, MINUTE, only, TestClock, watch } from './helpers.js';

/**
 * The log_gap rule (issue 39 point 3) on a real PostgreSQL inbox: deliveries signed with the
 * testing kit, some of a flow dropped, the watcher's alerts as an HTTP sink receives them (exact
 * keys, severities, evidence), quiet while only late, resolved by a late arrival, and shown by
 * `rack-webhooks inbox health`.
 */
setUp({ testTimeoutMs: 60_000, hookTimeoutMs: 120_000 });
captureOutput();

const ago = (minutes: number) => rackTimestamp(new Date(Date.now() - minutes * MINUTE));

describe('log gaps on PostgreSQL', () => {
  it('raises each lost event once past its bound, with the deliveries that imply it; a late arrival resolves it; inbox health lists the open ones', async () => {
    const h = await openInbox('pg');
    const receiver = h.receiver();
    const deliver = async (event: object) => (await h.deliver(receiver, event)).id!;
    const tick = rackTickId(new Date(Date.now() - 90 * MINUTE));

    // Complete flows: a source build, a promote with its outcome. Noise no rule reads as a gap: an
    // archive import (release:create alone), a failed build, a corrupt state's :failed (a new tick).
    await deliver(createTestEvent('release:create', { timestamp: ago(30), data: { id: 'RDONE00001' } }));
    await deliver(createTestEvent('build:create', { timestamp: ago(30), data: { id: 'BDONE00001', release_id: 'RDONE00001' } }));
    await deliver(createTestEvent('release:promote', { timestamp: ago(29), data: { id: 'RDONE00001' } }));
    await deliver(createTestEvent('app:promote:completed', { timestamp: ago(25), data: { id: 'RDONE00001' } }));
    await deliver(createTestEvent('release:create', { timestamp: ago(28), data: { id: 'RARCHIVE01' } }));
    await deliver(createTestEvent('build:create', { status: 'error', timestamp: ago(27), data: { id: 'BFAIL00001', message: 'exit 1' } }));
    await deliver(
      createTestEvent('app:budget:auto-shutdown:failed', {
        timestamp: ago(26),
        data: { tick_id: rackTickId(new Date(Date.now() - 26 * MINUTE)), failure_reason: 'state-corrupt' },
      }),
    );
    // Dropped: release:create of RLOST00001, the creation's release:promote of new-api, :armed of the
    // tick, release:create of RLATE00001 (it arrives late); the outcome of RSLOW00001 never comes.
    const build = await deliver(
      createTestEvent('build:create', { timestamp: ago(20), data: { id: 'BLOST00001', release_id: 'RLOST00001' } }),
    );
    const create = await deliver(createTestEvent('app:create', { timestamp: ago(19), data: { name: 'new-api' } }));
    const outcome = await deliver(createTestEvent('app:promote:completed', { timestamp: ago(18), data: { app: 'new-api', id: '' } }));
    const fired = await deliver(createTestEvent('app:budget:auto-shutdown:fired', { timestamp: ago(17), data: { tick_id: tick } }));
    const late = await deliver(
      createTestEvent('build:create', { timestamp: ago(16), data: { id: 'BLATE00001', release_id: 'RLATE00001' } }),
    );
    const slow = await deliver(createTestEvent('release:promote', { timestamp: ago(15), data: { id: 'RSLOW00001' } }));

    const sink = await alertEndpoint();
    const clock = new TestClock();
    const { watcher, errors } = await watch(h, clock, {
      rules: only('logGaps', { graceMs: 10 * MINUTE, promoteOutcomeMs: 60 * MINUTE }),
      onAlert: httpAlertSink(sink.url, { retries: 0 }),
    });
    // Just stored: each partner may still be in flight.
    expect(sink.received).toEqual([]);

    clock.advance(10 * MINUTE + 1000);
    await watcher.check();
    expect(errors).toEqual([]);
    const opened = sink.received.map((alert) => `${String(alert['key'])} ${String(alert['severity'])} ${String(alert['status'])}`);
    expect(opened).toEqual([
      'log_gap:billing-api:release:create:RLOST00001 critical open',
      'log_gap:new-api:release:promote: critical open',
      `log_gap:billing-api:app:budget:auto-shutdown:armed:${tick} critical open`,
      'log_gap:billing-api:release:create:RLATE00001 critical open',
    ]);
    const evidence = (alert: Record<string, unknown>) =>
      ((alert['fields'] as { evidence: { deliveryId: string; action: string }[] }).evidence ?? []).map(
        (e) => `${e.deliveryId} ${e.action}`,
      );
    expect(sink.received.map(evidence)).toEqual([
      [`${build} build:create`],
      [`${create} app:create`, `${outcome} app:promote:completed`],
      [`${fired} app:budget:auto-shutdown:fired`],
      [`${late} build:create`],
    ]);
    expect(sink.received[1]).toMatchObject({
      rule: 'log_gap',
      fields: { app: 'new-api', id: '', missing: 'release:promote', gapRules: ['app_create_without_promote', 'outcome_without_promote'] },
    });
    expect(sink.received[0]!['summary']).toMatch(
      /^billing-api: release:create of RLOST00001 never arrived, though build:create says the build made it \(build:create delivery \d+ at (?:\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d \d\d:\d\d) UTC\); the rack never sends it again$/,
    );

    // Checked again: nothing new. The late release:create arrives: its gap resolves, once.
    await watcher.check();
    expect(sink.received).toHaveLength(4);
    await deliver(createTestEvent('release:create', { timestamp: ago(16), data: { id: 'RLATE00001' } }));
    await watcher.check();
    expect(sink.received.slice(4).map((alert) => `${String(alert['key'])} ${String(alert['status'])}`)).toEqual([
      'log_gap:billing-api:release:create:RLATE00001 resolved',
    ]);

    // The promote's bound: an hour after its start was stored, its outcome is missing.
    clock.advance(50 * MINUTE);
    await watcher.check();
    expect(sink.received.slice(5)).toMatchObject([
      {
        key: 'log_gap:billing-api:app:promote:completed|errored|cancelled:RSLOW00001',
        severity: 'warning',
        status: 'open',
        fields: {
          gapRules: ['promote_without_outcome'],
          evidence: [{ deliveryId: slow, action: 'release:promote' }],
          boundMs: 60 * MINUTE,
        },
      },
    ]);
    expect(errors).toEqual([]);

    // What the watcher keeps open, inbox health shows: a warning (exit 0), each gap with its deliveries.
    h.work(receiver);
    await h.settle(30_000);
    const on = ['--database', POSTGRES_URL, '--table', h.table];
    const json = await cli('inbox', 'health', ...on, '--json');
    expect(json.code, json.err).toBe(0);
    const report = JSON.parse(json.out) as { checks: Record<string, string>; reasons: string[]; logGaps: Record<string, unknown>[] };
    expect(report.checks['gaps']).toBe('warning');
    expect(report.reasons).toContain(`4 events the rack sent never arrived: ${String(sink.received[0]!['summary'])}`);
    expect(
      report.logGaps.map((gap) => [
        gap['key'],
        gap['severity'],
        gap['missing'],
        (gap['evidence'] as { deliveryId: string }[]).map((e) => e.deliveryId),
      ]),
    ).toEqual([
      ['log_gap:billing-api:release:create:RLOST00001', 'critical', 'release:create', [build]],
      ['log_gap:new-api:release:promote:', 'critical', 'release:promote', [create, outcome]],
      [`log_gap:billing-api:app:budget:auto-shutdown:armed:${tick}`, 'critical', 'app:budget:auto-shutdown:armed', [fired]],
      [
        'log_gap:billing-api:app:promote:completed|errored|cancelled:RSLOW00001',
        'warning',
        'app:promote:completed|errored|cancelled',
        [slow],
      ],
    ]);
    const text = await cli('inbox', 'health', ...on);
    expect(text.out).toContain('\nlog gaps        4 open\n  critical  since ');
    expect(text.out).toContain(`  [deliveries ${create}, ${outcome}]\n`);

    // And the console's overview (its stats view) lists them with the open alerts.
    const running = await startConsole({
      ...composeInbox({ database: h.db.database as unknown, table: h.table }),
      databaseShown: 'test',
      assetsDirectory: fakeAssets(),
      schemasDirectory: SCHEMAS,
    });
    onTestFinished(() => running.close());
    const overview = await fetch(`${running.origin}/api/overview`, { headers: { authorization: `Bearer ${running.token}` } });
    expect(overview.status).toBe(200);
    const { alerts } = (await overview.json()) as { alerts: { rule: string; key: string; severity: string; summary: string }[] };
    expect(alerts.map((alert) => `${alert.rule} ${alert.severity} ${alert.key}`)).toEqual([
      'log_gap critical log_gap:billing-api:release:create:RLOST00001',
      'log_gap critical log_gap:new-api:release:promote:',
      `log_gap critical log_gap:billing-api:app:budget:auto-shutdown:armed:${tick}`,
      'log_gap warning log_gap:billing-api:app:promote:completed|errored|cancelled:RSLOW00001',
    ]);
    expect(alerts[0]!.summary).toBe(sink.received[0]!['summary']);
    // Its app view lists each app's gaps with the anomalies, and marks their deliveries on the timeline.
    const app = await fetch(`${running.origin}/api/app?name=new-api`, { headers: { authorization: `Bearer ${running.token}` } });
    const detail = (await app.json()) as { anomalies: unknown[]; timeline: { id: string; anomaly: boolean }[] };
    expect(detail.anomalies).toEqual([{ kind: 'log_gap', id: '', message: sink.received[1]!['summary'], deliveryIds: [create, outcome] }]);
    expect(detail.timeline.filter((event) => event.anomaly).map((event) => event.id)).toEqual([create, outcome]);
    const list = await fetch(`${running.origin}/api/apps`, { headers: { authorization: `Bearer ${running.token}` } });
    const { apps } = (await list.json()) as { apps: { app: string; anomalies: number }[] };
    expect(apps.find((entry) => entry.app === 'new-api')).toMatchObject({ anomalies: 1 });
  });
});
