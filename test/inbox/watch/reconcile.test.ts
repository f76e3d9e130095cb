/**
 * inbox.watch({ reconcile }) (issue 39 point 4) end to end: the emulator's rack sends its webhooks
 * to a real receiver and PostgreSQL inbox, drops chosen ones, and serves its read API; the
 * watcher, on a test clock, reconciles every period under the watch lease and tells each gap once
 * through an HTTP alert sink, resolves it when the event turns up, and tells a failing pass once.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { setUp } from '../../kit/setup.js';
import { httpAlertSink, type Alert, type WatchOptions } from '../../../src/inbox.js';
import { createRackClient, type RackFetch } from '../../../src/rack-api/client.js';
import { createTestEvent, rackTimestamp } from '../../../src/testing/index.js';
import { inProcessFetch } from '../../kit/rack-api.js';
import { startScenario, type Scenario } from '../../reconcile/scenario.js';
import { captureOutput, cli } from '../../cli/inbox-helpers.js';
import { databaseForFile, POSTGRES_URL, type TestDatabase } from '../databases.js';
import { alertEndpoint, MINUTE, NO_RULES, TestClock, told, watch } from './helpers.js';

setUp({ testTimeoutMs: 60_000, hookTimeoutMs: 120_000 });
captureOutput();

let db: TestDatabase<'pg'>;
databaseForFile('pg', (opened) => (db = opened));

const ago = (ms: number) => new Date(Date.now() - ms);

async function scenario(): Promise<Scenario> {
  const started = await startScenario(db);
  onTestFinished(() => started.close());
  return started;
}

/** The rack's API in process, counting passes (each reads `GET /apps` once) and failing with a wrong token while `broken`. */
function rackClient(s: Scenario, options: { expiresAt?: Date } = {}) {
  const state = { passes: 0, broken: false };
  const inner = inProcessFetch(s.rack.api);
  const fetch: RackFetch = (url, init) => {
    if (new URL(url).pathname === '/apps') state.passes++;
    const headers = state.broken ? { ...init.headers, authorization: `Basic ${btoa('jwt:not-a-token-the-rack-minted')}` } : init.headers;
    return inner(url, { ...init, headers });
  };
  const token = s.rack.api.mintToken(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt });
  return { client: createRackClient({ url: 'https://api.rack.example', token, fetch }), token, state };
}

/** A watcher on the test clock with only the scheduled reconcile; its own loop never comes round again during a test. */
const watchRack = (s: Scenario, clock: TestClock, options: Partial<WatchOptions> & Pick<WatchOptions, 'reconcile'>) =>
  watch(s, clock, { rules: NO_RULES, ...options });

describe('inbox.watch({ reconcile })', () => {
  it('tells exactly the dropped events once, nothing new on the next pass, and resolves a gap when its event turns up', async () => {
    const s = await scenario();
    const api = s.rack.api;
    await api.createApp('web', { at: ago(72 * 60 * MINUTE) });
    const lostRelease = await api.build('web', { at: ago(10 * MINUTE), drop: ['release:create'] });
    const lostBuild = await api.build('web', { at: ago(9 * MINUTE), drop: ['build:create'] });
    await api.build('web', { at: ago(8 * MINUTE) });
    const tick = await api.autoShutdown('web', 'armed', { at: ago(7 * MINUTE), drop: true });
    const { client, token, state } = rackClient(s);
    const sink = await alertEndpoint();
    const received = sink.received as unknown as Alert[]; // as httpAlertSink posts them: an Alert as JSON
    const clock = new TestClock();
    const { watcher } = await watchRack(s, clock, {
      onAlert: httpAlertSink(sink.url),
      reconcile: { client, everyMs: 15 * MINUTE },
    });

    const releaseKey = `reconcile_gap:web:release:create:${lostRelease.release!.id}`;
    const buildKey = `reconcile_gap:web:build:create:${lostBuild.build.id}`;
    const armedKey = `reconcile_gap:web:app:budget:auto-shutdown:armed:${tick}`;
    expect(state.passes).toBe(1);
    expect(told(received).sort()).toEqual([`${armedKey} open`, `${buildKey} open`, `${releaseKey} open`].sort());
    const release = received.find((alert) => alert.key === releaseKey)!;
    expect(release).toMatchObject({ rule: 'reconcile_gap', severity: 'critical', status: 'open' });
    expect(release.fields).toEqual({
      action: 'release:create',
      app: 'web',
      id: lostRelease.release!.id,
      evidence: { route: '/apps/web/releases?limit=50', field: 'id', value: lostRelease.release!.id, at: expect.any(String) },
      recorded: null,
    });
    expect(release.summary).toContain('proof: GET /apps/web/releases?limit=50');
    expect(JSON.stringify(received)).not.toContain(token);

    // inbox health shows them under its gaps check (a warning: deliveries still flow), each with its proof.
    const health = await s.inbox.health();
    expect(health.checks.gaps).toBe('warning');
    expect(health.reasons).toContain(
      `3 events the rack's API proves it sent never arrived (scheduled reconcile): ${health.reconcile!.gaps[0]!.summary}`,
    );
    expect(health.reconcile!.problems).toEqual([]);
    expect(health.reconcile!.gaps.map((gap) => [gap.key, gap.evidence.route, gap.evidence.field, gap.recorded])).toEqual([
      [releaseKey, '/apps/web/releases?limit=50', 'id', null],
      [buildKey, '/apps/web/builds?limit=50', 'status', null],
      [armedKey, '/apps/web/budget/shutdown-state', 'armedNotificationFiredAt', null],
    ]);
    const text = await cli('inbox', 'health', '--database', POSTGRES_URL, '--table', s.table);
    // Exit 1 for the deliveries waiting with no worker here (no worker runs in this scenario), not for the gaps.
    expect(text.code, text.err).toBe(1);
    expect(text.out).toContain('deliveries waiting and no worker is running');
    expect(text.out).toContain('\nreconcile gaps  3 open\n  release:create  app=web  id=');
    expect(text.out).toContain(`  build:create (success)  app=web  id=${lostBuild.build.id}  sent `);

    // Within the period: no pass. The next period: a pass, and nothing new to tell.
    await watcher.check();
    expect(state.passes).toBe(1);
    clock.advance(15 * MINUTE);
    await watcher.check();
    expect(state.passes).toBe(2);
    expect(received).toHaveLength(3);

    // The release turns up late (as recorded or resent): its gap resolves, the others stay open,
    // though their proofs are older than the window now (a pass reaches back to every open gap).
    const dropped = api.dropped.find((event) => event.action === 'release:create')!;
    await s.rack.dispatch(createTestEvent('release:create', { timestamp: rackTimestamp(), data: dropped.data as never }));
    clock.advance(15 * MINUTE);
    await watcher.check();
    expect(told(received.slice(3))).toEqual([`${releaseKey} resolved`]);
    expect((await watcher.incidents()).map((alert) => alert.key).sort()).toEqual([armedKey, buildKey].sort());
  });

  it('with record: true, stores each proven gap as a reconciled delivery and says so in its alert; the next pass finds it held', async () => {
    const s = await scenario();
    const api = s.rack.api;
    await api.createApp('web', { at: ago(72 * 60 * MINUTE) });
    const lostRelease = await api.build('web', { at: ago(10 * MINUTE), drop: ['release:create'] });
    const { client } = rackClient(s);
    const clock = new TestClock();
    const { watcher, alerts } = await watchRack(s, clock, { reconcile: { client, everyMs: 15 * MINUTE, record: true } });

    const releaseKey = `reconcile_gap:web:release:create:${lostRelease.release!.id}`;
    const opened = alerts.find((alert) => alert.key === releaseKey)!;
    const recorded = (opened.fields as { recorded: { id: string } | null }).recorded;
    expect(recorded).toEqual({ id: expect.any(String) });
    const row = await s.inbox.get(recorded!.id);
    expect(row).toMatchObject({ action: 'release:create', app: 'web', state: 'pending', origin: 'reconciled' });
    expect(row!.evidence).toMatchObject({ route: '/apps/web/releases?limit=50', field: 'id', value: lostRelease.release!.id });

    // The inbox holds it now (as reconciled): the next pass resolves the gap and records nothing more.
    clock.advance(15 * MINUTE);
    await watcher.check();
    expect(told(alerts)).toEqual([`${releaseKey} open`, `${releaseKey} resolved`]);
    const held = await s.inbox.list({ action: 'release:create', limit: 10 });
    expect(held.deliveries.filter((delivery) => delivery.origin === 'reconciled')).toHaveLength(1);
  });

  it('tells a failing pass once as reconcile_failed (code and reason, never the token); the next good pass resolves it', async () => {
    const s = await scenario();
    await s.rack.api.createApp('web', { at: ago(72 * 60 * MINUTE) });
    const { client, token, state } = rackClient(s);
    state.broken = true;
    const clock = new TestClock();
    const { watcher, alerts, errors } = await watchRack(s, clock, { reconcile: { client, everyMs: 10 * MINUTE } });

    expect(told(alerts)).toEqual(['reconcile_failed open']);
    expect(alerts[0]).toMatchObject({ rule: 'reconcile_failed', severity: 'warning' });
    expect(alerts[0]!.fields).toMatchObject({
      code: 'rack_auth_invalid',
      httpStatus: 401,
      route: '/apps',
      rack: 'https://api.rack.example',
    });
    expect(alerts[0]!.summary).toMatch(/^the scheduled reconcile against https:\/\/api\.rack\.example failed \(rack_auth_invalid\): /);
    expect(JSON.stringify(alerts)).not.toContain(token);
    expect(errors).toEqual([]);
    const health = await s.inbox.health();
    expect(health.checks.gaps).toBe('warning');
    expect(health.reconcile!.problems).toMatchObject([
      { rule: 'reconcile_failed', code: 'rack_auth_invalid', summary: alerts[0]!.summary },
    ]);

    clock.advance(10 * MINUTE);
    await watcher.check(); // still failing: the same incident, no second alert
    expect(told(alerts)).toEqual(['reconcile_failed open']);

    state.broken = false;
    clock.advance(10 * MINUTE);
    await watcher.check();
    expect(told(alerts)).toEqual(['reconcile_failed open', 'reconcile_failed resolved']);
    expect(state.passes).toBe(3);
    expect((await s.inbox.health()).reconcile).toEqual({ gaps: [], problems: [] });
  });

  it('an open gap whose stored fields are not JSON stops neither the pass nor health(): a failing rack is still told', async () => {
    const s = await scenario();
    await s.rack.api.createApp('web', { at: ago(72 * 60 * MINUTE) });
    // A hand edit or another writer: the fields column is text, not jsonb.
    await db.query(
      `INSERT INTO ${s.table}_incidents (rule, key, severity, since, opened_at, summary, fields, open_sent)
       VALUES ('reconcile_gap', 'reconcile_gap:web:build:create:B1', 'critical', now(), now(), 'a gap', '{not json', true)`,
    );
    const { client, state } = rackClient(s);
    state.broken = true;
    const clock = new TestClock();
    const { alerts, errors } = await watchRack(s, clock, { reconcile: { client, everyMs: 10 * MINUTE } });
    expect(told(alerts)).toEqual(['reconcile_failed open']);
    expect(state.passes).toBe(1);
    expect(errors).toEqual([]);
    // health() reads every open incident too: the row is listed, its unreadable fields empty.
    const health = await s.inbox.health();
    expect(health.reconcile!.gaps.map((gap) => [gap.key, gap.app, gap.evidence.at])).toEqual([
      ['reconcile_gap:web:build:create:B1', '', ''],
    ]);
  });

  it('warns once ahead of the token lapsing', async () => {
    const s = await scenario();
    await s.rack.api.createApp('web', { at: ago(72 * 60 * MINUTE) });
    const expiresAt = new Date(Date.now() + 2 * 24 * 60 * MINUTE);
    const { client } = rackClient(s, { expiresAt });
    const clock = new TestClock();
    const { watcher, alerts } = await watchRack(s, clock, { reconcile: { client, everyMs: 15 * MINUTE } });
    clock.advance(15 * MINUTE);
    await watcher.check();
    expect(told(alerts)).toEqual(['reconcile_token open']);
    expect(alerts[0]!.fields).toMatchObject({ expiresAt: new Date(Math.floor(expiresAt.getTime() / 1000) * 1000).toISOString() });
    expect(alerts[0]!.summary).toMatch(/^the rack token of the scheduled reconcile expires at .* \(in 2 d\)/);
  });

  it('runs one pass per period across two watchers of one table (the watch lease)', async () => {
    const s = await scenario();
    const api = s.rack.api;
    await api.createApp('web', { at: ago(72 * 60 * MINUTE) });
    const lost = await api.build('web', { at: ago(5 * MINUTE), drop: ['release:create'] });
    const { client, state } = rackClient(s);
    const clock = new TestClock();
    const reconcile = { client, everyMs: 15 * MINUTE };
    const first = await watchRack(s, clock, { reconcile, watcherId: 'first' });
    const second = await watchRack(s, clock, { reconcile, watcherId: 'second' });
    for (let period = 0; period < 3; period++) {
      await first.watcher.check();
      await second.watcher.check();
      expect(state.passes).toBe(period + 1);
      clock.advance(15 * MINUTE);
    }
    expect(told([...first.alerts, ...second.alerts])).toEqual([`reconcile_gap:web:release:create:${lost.release!.id} open`]);
  });
});
