/**
 * How deep reconcile reads the rack's lists, which have no paging: a larger `limit` until the
 * oldest record is past the window's start (for builds, past it by the longest build), or the
 * list ran out; and a list that still does not reach back is reported uncovered.
 */
import { describe, expect, it } from 'vitest';
import { createRackClient } from '../../src/rack-api/client.js';
import { findGaps } from '../../src/reconcile/gaps.js';
import { readRack } from '../../src/reconcile/read-rack.js';
import { createRackEmulator } from '../../src/testing/emulator.js';
import { inProcessFetch } from '../kit/rack-api.js';

const HOUR = 3_600_000;
const now = Date.now();
const at = (ms: number) => new Date(now - ms);

async function rackWith(builds: number) {
  // No receiver: the webhooks go nowhere, only the records matter here.
  const rack = createRackEmulator({ log: () => {} });
  await rack.api.createApp('web');
  // Started before the window, ended inside it: the list must reach back past the window's start to find it.
  const edge = await rack.api.build('web', { started: at(25 * HOUR), at: at(23 * HOUR) });
  for (let index = 0; index < builds; index++) await rack.api.build('web', { started: at(HOUR + index * 1000), at: at(HOUR) });
  const requests: string[] = [];
  const fetch = inProcessFetch(rack.api);
  const client = createRackClient({
    url: 'https://api.rack.example',
    token: rack.api.mintToken(),
    fetch: (url, init) => (requests.push(new URL(url).pathname + new URL(url).search), fetch(url, init)),
  });
  return { client, edge, requests };
}

describe('readRack', () => {
  it('asks a larger limit until a list reaches back past the window start by the longest build', async () => {
    const { client, edge, requests } = await rackWith(60);
    const snapshot = await readRack(client, at(24 * HOUR), { firstLimit: 50, maxLimit: 1000, buildLookbackMs: 2 * HOUR });
    const [web] = snapshot.apps;
    expect(web!.builds).toMatchObject({ route: '/apps/web/builds?limit=200', limit: 200, covered: true });
    expect(web!.builds.records.map((build) => build.id)).toContain(edge.build.id);
    expect(requests.filter((path) => path.includes('/builds'))).toEqual(['/apps/web/builds?limit=50', '/apps/web/builds?limit=200']);
    // 61 releases: more than 50, so the second read is needed too.
    expect(web!.releases).toMatchObject({ limit: 200, covered: true });
    expect(web!.releases.records).toHaveLength(61);
  });

  it('stops at maxLimit and says the list did not cover the window', async () => {
    const { client, edge } = await rackWith(60);
    const snapshot = await readRack(client, at(24 * HOUR), { firstLimit: 50, maxLimit: 60, buildLookbackMs: 2 * HOUR });
    const [web] = snapshot.apps;
    expect(web!.builds).toMatchObject({ route: '/apps/web/builds?limit=60', limit: 60, covered: false });
    expect(web!.builds.records.map((build) => build.id)).not.toContain(edge.build.id);
  });

  it('reads only the apps named, and fails on a missing one', async () => {
    const { client } = await rackWith(0);
    expect((await readRack(client, at(HOUR), { firstLimit: 50, maxLimit: 1000, buildLookbackMs: 0 }, ['web'])).apps).toHaveLength(1);
    await expect(readRack(client, at(HOUR), { firstLimit: 50, maxLimit: 1000, buildLookbackMs: 0 }, ['nope'])).rejects.toMatchObject({
      code: 'rack_not_found',
      httpStatus: 404,
    });
  });

  it('goes on past an app deleted between the list and its reads, and says so', async () => {
    const rack = createRackEmulator({ log: () => {} });
    await rack.api.createApp('gone');
    await rack.api.createApp('web');
    const fetch = inProcessFetch(rack.api);
    // `gone` is listed, then deleted before its builds are read.
    const client = createRackClient({
      url: 'https://api.rack.example',
      token: rack.api.mintToken(),
      fetch: (url, init) => (new URL(url).pathname.startsWith('/apps/gone/') ? rack.api.apps.delete('gone') : undefined, fetch(url, init)),
    });
    const snapshot = await readRack(client, at(HOUR), { firstLimit: 50, maxLimit: 1000, buildLookbackMs: 0 });
    expect([snapshot.apps.map((app) => app.app.name), snapshot.gone]).toEqual([['web'], ['gone']]);
    const report = findGaps(snapshot, [], { since: at(HOUR), until: snapshot.readAt, graceMs: 0 });
    expect(report.cannotTell).toContainEqual({
      action: '*',
      app: 'gone',
      id: '',
      reason: 'the app was deleted while it was read: its records went with it',
    });
  });
});
