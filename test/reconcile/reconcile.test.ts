/**
 * reconcile(inbox, client) end to end: the emulator's rack sends its webhooks to a real receiver
 * and inbox (PostgreSQL), a test drops chosen deliveries, and reconcile must name exactly those
 * the rack's records prove, with the rest reported apart as "cannot tell", never as missing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { findGaps } from '../../src/reconcile/gaps.js';
import { reconcile } from '../../src/reconcile/reconcile.js';
import { databaseForFile, type TestDatabase } from '../inbox/databases.js';
import { ago, HOUR, startScenario, type Scenario } from './scenario.js';

let db: TestDatabase<'pg'>;
databaseForFile('pg', (opened) => (db = opened));
const scenarios: Scenario[] = [];
afterEach(async () => {
  await Promise.all(scenarios.splice(0).map((scenario) => scenario.close()));
});
async function scenario(): Promise<Scenario> {
  const started = await startScenario(db);
  scenarios.push(started);
  return started;
}

const SHUTDOWN = 'app:budget:auto-shutdown:';
const gapKeys = (gaps: readonly { action: string; app: string; id: string }[]) =>
  gaps.map((gap) => `${gap.action} ${gap.app} ${gap.id}`).sort();

describe('reconcile', () => {
  it('names exactly the dropped deliveries the rack can prove, with the evidence of each', { timeout: 60_000 }, async () => {
    const { rack, inbox, client } = await scenario();
    const api = rack.api;
    await api.createApp('web', { at: ago(72 * HOUR) });
    await api.createApp('api', { at: ago(72 * HOUR) });
    const release = await api.build('web', { at: ago(10 * HOUR), drop: ['release:create'] });
    const success = await api.build('web', { at: ago(9 * HOUR), drop: ['build:create'] });
    const failed = await api.build('web', { at: ago(8 * HOUR), outcome: 'failed', drop: true });
    // Started before the window, ended inside it: its event went out inside.
    const edge = await api.build('web', { started: ago(25 * HOUR), at: ago(23 * HOUR), drop: ['build:create'] });
    // Ended before the window: not this reconcile's business.
    await api.build('web', { started: ago(31 * HOUR), at: ago(30 * HOUR), drop: true });
    const env = await api.changeEnv('web', { at: ago(7 * HOUR), drop: true });
    api.startBuild('web', { started: ago(HOUR) }); // still running: owes nothing
    const threshold = await api.budgetAlert('web', 'threshold', { at: ago(6 * HOUR), drop: true });
    const cap = await api.budgetAlert('web', 'cap', { at: ago(5 * HOUR), drop: true });
    const webTick = await api.autoShutdown('web', 'armed', { at: ago(4 * HOUR) });
    await api.autoShutdown('web', 'fired', { at: ago(3 * HOUR), drop: true });
    await api.autoShutdown('web', 'restored', { at: ago(2 * HOUR), drop: true });
    const apiTick = await api.autoShutdown('api', 'armed', { at: ago(4 * HOUR), drop: true });
    await api.autoShutdown('api', 'failed', { at: ago(3 * HOUR), drop: true, failureReason: 'admission-rejected' });
    await api.autoShutdown('api', 'expired', { at: ago(2 * HOUR), drop: true });

    const report = await reconcile(inbox, client(), { since: ago(24 * HOUR) });

    expect(gapKeys(report.gaps)).toEqual(
      [
        `release:create web ${release.release!.id}`,
        `build:create web ${success.build.id}`,
        `build:create web ${failed.build.id}`,
        `build:create web ${edge.build.id}`,
        `release:create web ${env.id}`,
        `app:budget:threshold web ${threshold}`,
        `app:budget:cap web ${cap}`,
        `${SHUTDOWN}fired web ${webTick}`,
        `${SHUTDOWN}restored web ${webTick}`,
        `${SHUTDOWN}armed api ${apiTick}`,
        `${SHUTDOWN}failed api ${apiTick}`,
        `${SHUTDOWN}expired api ${apiTick}`,
      ].sort(),
    );
    const byId = (id: string, action: string) => report.gaps.find((gap) => gap.id === id && gap.action === action);
    expect(byId(failed.build.id, 'build:create')).toEqual({
      action: 'build:create',
      app: 'web',
      id: failed.build.id,
      status: 'error',
      evidence: { route: '/apps/web/builds?limit=50', field: 'status', value: 'failed', at: failed.build.ended },
      data: { app: 'web', id: failed.build.id },
    });
    expect(byId(success.build.id, 'build:create')?.data).toEqual({ app: 'web', id: success.build.id, release_id: success.release!.id });
    expect(byId(success.build.id, 'build:create')?.status).toBe('success');
    expect(byId(env.id, 'release:create')?.evidence).toEqual({
      route: '/apps/web/releases?limit=50',
      field: 'id',
      value: env.id,
      at: env.created,
    });
    expect(byId(threshold, 'app:budget:threshold')?.evidence).toEqual({
      route: '/apps/web/budget',
      field: 'state.alert-fired-at-threshold',
      value: threshold,
      at: threshold,
    });
    const armed = report.gaps.find((gap) => gap.action === `${SHUTDOWN}armed`)!;
    expect(armed.evidence).toMatchObject({ route: '/apps/api/budget/shutdown-state', field: 'armedNotificationFiredAt' });
    expect(report.uncovered).toEqual([]);
    expect(report.cannotTell).toEqual([]);
    expect(report.apps).toEqual(['api', 'web']);
  });

  it('finds nothing missing when nothing was dropped', { timeout: 60_000 }, async () => {
    const { rack, inbox, client } = await scenario();
    const api = rack.api;
    await api.createApp('web', { at: ago(48 * HOUR) });
    const { release } = await api.build('web', { at: ago(3 * HOUR) });
    await api.build('web', { at: ago(2 * HOUR), outcome: 'failed' });
    await api.promote('web', release!.id, { at: ago(2 * HOUR) });
    await api.budgetAlert('web', 'threshold', { at: ago(2 * HOUR) });
    await api.budgetAlert('web', 'cap', { at: ago(2 * HOUR) });
    await api.autoShutdown('web', 'armed', { at: ago(90 * 60_000) });
    await api.autoShutdown('web', 'fired', { at: ago(HOUR) });
    const report = await reconcile(inbox, client());
    expect(report).toMatchObject({ gaps: [], cannotTell: [], uncovered: [] });
  });

  it('reports what the API cannot prove apart, never as missing', { timeout: 60_000 }, async () => {
    const { rack, inbox, client } = await scenario();
    const api = rack.api;
    await api.createApp('web', { at: ago(48 * HOUR), drop: true });
    const imported = await api.importArchive('web', { at: ago(5 * HOUR) });
    await api.promote('web', imported.release.id, { at: ago(4 * HOUR), drop: true });
    await api.createApp('jobs', { at: ago(48 * HOUR) });
    // Cancelled: the state is deleted right after the send, so nothing proves either event.
    await api.autoShutdown('jobs', 'armed', { at: ago(3 * HOUR), drop: true });
    await api.autoShutdown('jobs', 'cancelled', { at: ago(2 * HOUR), drop: true });
    await api.createApp('db', { at: ago(48 * HOUR) });
    await api.autoShutdown('db', 'armed', { at: ago(3 * HOUR), drop: true });
    api.corruptShutdownState('db');
    // Sent a moment ago: it may still be on its way.
    const recent = await api.build('db', { at: ago(5_000), drop: ['build:create'] });

    const report = await reconcile(inbox, client(), { since: ago(24 * HOUR) });
    expect(report.gaps).toEqual([]);
    expect(gapKeys(report.cannotTell)).toEqual(
      [
        `${SHUTDOWN}* db `,
        `build:create db ${recent.build.id}`,
        `build:create web ${imported.build.id}`,
        'app:create web web',
        `release:promote web ${imported.release.id}`,
      ].sort(),
    );
    expect(report.cannotTell.find((item) => item.app === 'db' && item.action === 'build:create')?.reason).toMatch(
      /may still be on its way/,
    );
  });

  it('reads past the window start, and says which lists did not reach it', { timeout: 60_000 }, async () => {
    const { rack, inbox, client } = await scenario();
    const api = rack.api;
    await api.createApp('web', { at: ago(48 * HOUR) });
    const releases = [];
    for (let hour = 6; hour >= 1; hour--) releases.push(await api.changeEnv('web', { at: ago(hour * HOUR), drop: true }));

    const shallow = await reconcile(inbox, client(), { since: ago(24 * HOUR), maxLimit: 2 });
    expect(shallow.uncovered).toEqual([{ app: 'web', route: '/apps/web/releases?limit=2', limit: 2 }]);
    // Only the two newest were read: the older gaps could not be looked for.
    expect(gapKeys(shallow.gaps)).toEqual(
      releases
        .slice(-2)
        .map((release) => `release:create web ${release.id}`)
        .sort(),
    );

    const deep = await reconcile(inbox, client(), { since: ago(24 * HOUR), maxLimit: 1000 });
    expect(deep.uncovered).toEqual([]);
    expect(gapKeys(deep.gaps)).toEqual(releases.map((release) => `release:create web ${release.id}`).sort());
  });

  it('is a pure function of the records and the held events', () => {
    const since = new Date('2026-11-28T00:00:00Z');
    const window = { since, until: new Date('2026-11-29T00:00:00Z'), graceMs: 60_000 };
    const app = { name: 'web', release: '', status: 'running', locked: false };
    const releases = {
      route: '/apps/web/releases?limit=50',
      limit: 50,
      covered: true,
      records: [{ id: 'RAAAAAAAAAA', app: 'web', build: '', created: '2026-11-28T12:00:00Z' }],
    };
    const snapshot = {
      app,
      releases,
      builds: { route: '/apps/web/builds?limit=50', limit: 50, covered: true, records: [] },
      budget: { config: null, state: null },
      shutdown: null,
    };
    const held = [{ action: 'app:create', app: 'web', id: 'web', tickId: null, eventMs: 0 }];
    expect(findGaps({ apps: [snapshot], readAt: window.until }, held, window).gaps.map((gap) => gap.id)).toEqual(['RAAAAAAAAAA']);
    const heldLower = [
      ...held,
      { action: 'release:create', app: 'web', id: 'raaaaaaaaaa', tickId: null, eventMs: Date.parse('2026-11-28T12:00:00Z') },
    ];
    expect(findGaps({ apps: [snapshot], readAt: window.until }, heldLower, window).gaps).toEqual([]);
  });
});
