/**
 * The emulator's rack API (rack-webhooks/testing): the routes of rack-api.md answered from the
 * state its changes write, with the rack's authentication, status codes and error bodies, and the
 * webhooks each change sends (or drops).
 */
import { describe, expect, it } from 'vitest';
import { createRackClient } from '../../src/rack-api/client.js';
import { createRackEmulator } from '../../src/testing/emulator.js';
import { inProcessFetch } from '../kit/rack-api.js';
import { ConnectionDropped } from '../../src/testing/rack-api/api.js';

const BASE = 'https://api.rack.example';

function dispatching() {
  const dispatched: { action: string; data: Record<string, string> }[] = [];
  const rack = createRackEmulator({ log: () => {} });
  const send = rack.dispatch.bind(rack);
  (rack as { dispatch: typeof send }).dispatch = async (event, options) => {
    dispatched.push(event as (typeof dispatched)[number]);
    return send(event, options);
  };
  const token = rack.api.mintToken();
  const get = (path: string, headers: Record<string, string> = {}) =>
    rack.api.handle(new Request(`${BASE}${path}`, { headers: { authorization: `Basic ${btoa(`jwt:${token}`)}`, ...headers } }));
  return { rack, api: rack.api, dispatched, get };
}

describe('the emulator rack API', () => {
  it('sends the rack webhooks of each change in order, and records the dropped ones apart', async () => {
    const { api, dispatched } = dispatching();
    await api.createApp('web');
    const { build, release } = await api.build('web', { drop: ['release:create'] });
    await api.build('web', { outcome: 'failed' });
    expect(dispatched.map((event) => event.action)).toEqual(['release:promote', 'app:create', 'build:create', 'build:create']);
    expect(dispatched[2]!.data).toMatchObject({ app: 'web', id: build.id, release_id: release!.id });
    expect(api.dropped.map((event) => [event.action, event.data['id']])).toEqual([['release:create', release!.id]]);
    expect(api.sent).toHaveLength(5);
  });

  it('answers the routes from that state, newest first, with the rack status codes and bodies', async () => {
    const { api, get } = dispatching();
    await api.createApp('web');
    const older = await api.build('web', { at: new Date('2026-11-28T10:00:00.5Z') });
    const newer = await api.build('web', { at: new Date('2026-11-28T11:00:00Z') });
    const builds = (await (await get('/apps/web/builds?limit=1')).json()) as { id: string; ended: string }[];
    expect(builds.map((entry) => [entry.id, entry.ended])).toEqual([[newer.build.id, '2026-11-28T11:00:00Z']]);
    const one = await get(`/apps/web/releases/${older.release!.id.toLowerCase()}`);
    expect(((await one.json()) as { created: string }).created).toBe('2026-11-28T10:00:00.5Z');
    expect((await (await get('/apps/web/releases')).text()).startsWith('[\n  {\n')).toBe(true);

    const missing = await get('/apps/web/builds/BNOPE', { accept: 'application/json' });
    expect([missing.status, await missing.text()]).toEqual([500, '{"error":"builds.atom.rack.example \\"bnope\\" not found"}\n']);
    const plain = await get('/apps/nope');
    expect([plain.status, plain.headers.get('content-type'), await plain.text()]).toEqual([
      404,
      'text/plain; charset=utf-8',
      'app not found: nope\n',
    ]);
    expect((await get('/apps/web/builds?limit=x')).status).toBe(500);
    await expect(get('/apps/web/builds?limit=-1')).rejects.toBeInstanceOf(ConnectionDropped);
    expect((await get('/system/releases')).status).toBe(501);
    const unknown = await api.handle(new Request(`${BASE}/nowhere`));
    expect([unknown.status, await unknown.text()]).toEqual([404, '']);
    expect(await (await api.handle(new Request(`${BASE}/check`))).text()).toBe('ok');
    const anonymous = await api.handle(new Request(`${BASE}/apps`));
    expect([anonymous.status, await anonymous.text()]).toEqual([401, 'invalid authentication\n']);
  });

  it('keeps an auto-shutdown lifecycle: stamps before each send, state deleted on cancel', async () => {
    const { api, get, dispatched } = dispatching();
    await api.createApp('web');
    const at = new Date('2026-11-28T10:00:00Z');
    const tick = await api.autoShutdown('web', 'armed', { at });
    await api.autoShutdown('web', 'fired', { at: new Date('2026-11-28T11:00:00Z') });
    const state = (await (await get('/apps/web/budget/shutdown-state')).json()) as Record<string, unknown>;
    expect(state).toMatchObject({
      shutdownTickId: tick,
      armedNotificationFiredAt: '2026-11-28T10:00:00Z',
      firedNotificationFiredAt: '2026-11-28T11:00:00Z',
    });
    expect(dispatched.at(-1)!.data).toMatchObject({ tick_id: tick, shutdown_at: '2026-11-28T11:00:00Z' });
    await api.autoShutdown('web', 'cancelled');
    expect(await (await get('/apps/web/budget/shutdown-state')).text()).toBe('null\n');
    api.corruptShutdownState('web');
    expect((await get('/apps/web/budget/shutdown-state')).status).toBe(500);
  });

  it('takes the rack password with any other user, and lets everyone in when it is empty', async () => {
    const password = 'p'.repeat(64);
    const rack = createRackEmulator({ log: () => {}, api: { password } });
    await rack.api.createApp('web');
    const fetch = inProcessFetch(rack.api);
    const withPassword = createRackClient({ url: `https://rack:${password}@api.rack.example`, fetch });
    expect(withPassword.token).toBeUndefined();
    expect((await withPassword.apps()).map((app) => app.name)).toEqual(['web']);
    await expect(createRackClient({ url: 'https://rack:wrong@api.rack.example', fetch }).apps()).rejects.toMatchObject({
      code: 'rack_auth_invalid',
      httpStatus: 401,
    });
    const open = createRackEmulator({ log: () => {}, api: { password: '' } });
    await open.api.createApp('web');
    expect(await createRackClient({ url: 'https://rack:any@api.rack.example', fetch: inProcessFetch(open.api) }).apps()).toHaveLength(1);
  });
});
