/**
 * The console's API over a real inbox: the delivery log with its filters and pages, one delivery
 * in full, the actions and their refusals, each app's state and timeline, and the live stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEvent } from '../../src/testing/test-event.js';
import { callApi, eventually, openConsoleFixture, type ConsoleFixture } from './console-fixture.js';
import { FAILING_ACTION, scenario } from './scenario.js';

let fixture: ConsoleFixture;
let cookie: string;

const api = <T = Record<string, unknown>>(path: string, init?: RequestInit) => callApi<T>(fixture, cookie, path, init);

function post(path: string) {
  return api(path, { method: 'POST', headers: { origin: fixture.console.origin, 'content-type': 'application/json' }, body: '{}' });
}

interface Row {
  id: string;
  state: string;
  action: string;
  app: string | null;
  eventTime: string;
  attempts: number;
  lastError: string | null;
}
interface Page {
  deliveries: Row[];
  next: string | null;
}

const idOf = async (action: string, app: string) => (await fixture.inbox.list({ action, app })).deliveries[0]!.id;

beforeAll(async () => {
  fixture = await openConsoleFixture();
  const response = await fetch(fixture.console.url, { redirect: 'manual' });
  cookie = response.headers.get('set-cookie')!.split(';')[0]!;
  fixture.failing.add(FAILING_ACTION);
  for (const { name, event } of scenario()) {
    const answer = await fixture.send(event);
    expect(answer, name).toMatchObject({ status: 200, body: { status: 'accepted' } });
  }
  fixture.startWorker();
  await eventually(async () => {
    const stats = await fixture.inbox.stats();
    return stats.pending + stats.running === 0 && stats.dead === 1;
  }, 'the worker to run every delivery');
});
afterAll(() => fixture?.close());

describe('the delivery log', () => {
  it('lists newest event first, without bodies or signatures', async () => {
    const { status, body } = await api<Page>('/api/deliveries');
    expect(status).toBe(200);
    expect(body.deliveries).toHaveLength(10);
    const times = body.deliveries.map((row) => row.eventTime);
    expect([...times].sort().reverse()).toEqual(times);
    expect(body.deliveries[0]).toMatchObject({ action: 'app:budget:auto-shutdown:armed', app: 'payments-api', state: 'done', attempts: 1 });
    expect(Object.keys(body.deliveries[0]!).sort()).toEqual(
      [
        'id',
        'state',
        'action',
        'app',
        'tickId',
        'eventTime',
        'eventNanos',
        'receivedAt',
        'signedAt',
        'secretIndex',
        'attempts',
        'runAt',
        'lastError',
        'doneAt',
        'duplicateOf',
        'replayedAt',
        'origin',
        'evidence',
      ].sort(),
    );
    // A received delivery: origin says so, and it has no reconcile evidence (docs/reconcile.md).
    expect(body.deliveries[0]).toMatchObject({ origin: 'received', evidence: null });
    expect(body.next).toBeNull();
  });

  it('filters by state, action pattern, app and event time', async () => {
    const dead = await api<Page>('/api/deliveries?state=dead');
    expect(dead.body.deliveries.map((row) => [row.action, row.app, row.lastError])).toEqual([
      [FAILING_ACTION, 'billing-api', `pager unreachable for ${FAILING_ACTION}`],
    ]);
    const shutdowns = await api<Page>('/api/deliveries?action=app:budget:auto-shutdown:*&app=billing-api');
    expect(shutdowns.body.deliveries.map((row) => row.action.split(':').pop())).toEqual(['failed', 'fired', 'armed']);
    const several = await api<Page>('/api/deliveries?action=app:budget:cap,release:promote');
    expect(several.body.deliveries.map((row) => row.action).sort()).toEqual(['app:budget:cap', 'release:promote']);
    const all = (await api<Page>('/api/deliveries')).body.deliveries;
    const middle = all[5]!.eventTime;
    const from = await api<Page>(`/api/deliveries?from=${encodeURIComponent(middle)}`);
    expect(from.body.deliveries.map((row) => row.id)).toEqual(all.slice(0, 6).map((row) => row.id));
    const to = await api<Page>(`/api/deliveries?to=${encodeURIComponent(middle)}`);
    expect(to.body.deliveries.map((row) => row.id)).toEqual(all.slice(6).map((row) => row.id));
    const both = await api<Page>('/api/deliveries?state=done,dead&app=orders-api');
    expect(both.body.deliveries).toHaveLength(2);
  });

  it('pages with the next cursor, older rows on each page', async () => {
    const all = (await api<Page>('/api/deliveries')).body.deliveries.map((row) => row.id);
    const seen: string[] = [];
    let path = '/api/deliveries?limit=3';
    for (;;) {
      const { body } = await api<Page>(path);
      seen.push(...body.deliveries.map((row) => row.id));
      if (body.next === null) break;
      path = `/api/deliveries?limit=3&after=${encodeURIComponent(body.next)}`;
    }
    expect(seen).toEqual(all);
  });

  it.each([
    ['state=lost', 'state must be one of pending, running, done, dead, ignored, duplicate, got "lost"'],
    ['action=app:*:cap', 'action must be an action or a prefix:* pattern'],
    ['from=yesterday', 'from must be an RFC 3339 timestamp'],
    ['limit=0', 'limit must be a whole number from 1 to 200'],
    ['limit=201', 'limit must be a whole number from 1 to 200'],
    ['after=nope', 'after must be the `next` cursor of a previous page'],
  ])('refuses %s with 400 bad_filter naming it', async (query, message) => {
    const { status, body } = await api<{ error: { code: string; message: string } }>(`/api/deliveries?${query}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe('bad_filter');
    expect(body.error.message).toContain(message);
  });
});

describe('one delivery', () => {
  it('has the event, its fields as the schema names them, the verification facts and the attempts', async () => {
    const id = await idOf(FAILING_ACTION, 'billing-api');
    const stored = (await fixture.inbox.get(id))!;
    const { status, body } = await api<{ delivery: Record<string, any> }>(`/api/deliveries/${id}`);
    expect(status).toBe(200);
    const delivery = body.delivery;
    expect(delivery['event']).toEqual(stored.event);
    expect(delivery['fields']).toContainEqual({ path: 'data.app', type: 'string', description: 'App name.', value: 'billing-api' });
    expect(delivery['fields']).toContainEqual(
      expect.objectContaining({ path: 'action', value: FAILING_ACTION, description: 'Event name.' }),
    );
    expect(delivery['verification']).toEqual({
      signedAt: stored.signedAt,
      signedAtIso: new Date(stored.signedAt * 1000).toISOString(),
      receivedAt: stored.receivedAt.toISOString(),
      skewSeconds: Math.round(stored.receivedAt.getTime() - stored.signedAt * 1000) / 1000,
      secretIndex: 0,
    });
    expect(Math.abs(delivery['verification'].skewSeconds)).toBeLessThan(5);
    expect(delivery['attempts']).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'failed',
        error: `pager unreachable for ${FAILING_ACTION}`,
        worker: expect.any(String),
      }),
    ]);
    expect(JSON.stringify(body)).not.toContain(stored.signature);
  });

  it('answers 404 for an id that is not there, whatever it looks like', async () => {
    for (const id of ['999999999', '99999999999999999999', 'abc', '-1', '0', '%2e%2e']) {
      const { status, body } = await api<{ error: { code: string } }>(`/api/deliveries/${id}`);
      expect(status, id).toBe(404);
      expect(body.error.code).toBe('not_found');
    }
  });
});

describe('actions', () => {
  it('retry moves a dead delivery back to pending and the worker runs it; a second retry is 409 not_dead', async () => {
    const id = await idOf(FAILING_ACTION, 'billing-api');
    fixture.failing.delete(FAILING_ACTION);
    expect(await post(`/api/deliveries/${id}/retry`)).toEqual({ status: 200, body: { moved: 1, liveWorkers: 1 } });
    await eventually(async () => (await fixture.inbox.get(id))?.state === 'done', 'the retried delivery to be done');
    const again = await post(`/api/deliveries/${id}/retry`);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      error: { code: 'not_dead', message: `delivery ${id} is done: retry moves dead and duplicate deliveries only` },
    });
  });

  it('replay moves a done delivery back to pending; 409 not_done otherwise; 404 when missing', async () => {
    const id = await idOf('app:budget:cap', 'billing-api');
    expect(await post(`/api/deliveries/${id}/replay`)).toEqual({ status: 200, body: { moved: 1, liveWorkers: 1 } });
    const replayed = await eventually(async () => {
      const delivery = await fixture.inbox.get(id);
      return delivery?.state === 'done' && delivery.replayedAt !== null ? delivery : undefined;
    }, 'the replayed delivery to run again');
    expect(replayed.attempts).toBe(2);
    expect((await post('/api/deliveries/999999999/replay')).status).toBe(404);
    fixture.failing.add('app:budget:reset');
    await fixture.send(createTestEvent('app:budget:reset', { data: { app: 'billing-api' } }));
    const deadId = await eventually(async () => (await fixture.inbox.list({ state: 'dead' })).deliveries[0]?.id, 'a dead delivery');
    const notDone = await post(`/api/deliveries/${deadId}/replay`);
    expect(notDone).toEqual({
      status: 409,
      body: { error: { code: 'not_done', message: `delivery ${deadId} is dead: replay moves done deliveries only` } },
    });
  });

  it('retry-dead moves every dead delivery', async () => {
    fixture.failing.add('app:budget:clear');
    await fixture.send(createTestEvent('app:budget:clear', { data: { app: 'orders-api' } }));
    await eventually(async () => (await fixture.inbox.stats()).dead === 2, 'two dead deliveries');
    fixture.failing.clear();
    expect(await post('/api/retry-dead')).toEqual({ status: 200, body: { moved: 2, liveWorkers: 1 } });
    await eventually(async () => (await fixture.inbox.stats()).done === (await fixture.inbox.stats()).total, 'every delivery to be done');
  });
});

describe('apps', () => {
  it('lists each app with its phase, breaker and anomalies', async () => {
    const { body } = await api<{ apps: Record<string, unknown>[] }>('/api/apps');
    const byApp = Object.fromEntries(body.apps.map((app) => [app['app'], app]));
    // Tripped by the cap, closed again by the app:budget:reset the replay test sent.
    expect(byApp['billing-api']).toMatchObject({ phase: 'shutdown-failed', breaker: 'closed', anomalies: 0 });
    expect(byApp['payments-api']).toMatchObject({
      phase: 'armed',
      expectedShutdownAt: expect.stringMatching(/Z$/),
      anomalies: 0,
      events: 1,
    });
    expect(byApp['orders-api']).toMatchObject({ anomalies: 1 });
  });

  it('gives an app its state, timeline lanes, phase spans and anomalies with their deliveries', async () => {
    const billing = await api<Record<string, any>>('/api/app?name=billing-api');
    expect(billing.status).toBe(200);
    expect(billing.body['app'].autoShutdown.phase).toBe('shutdown-failed');
    const timeline = billing.body['timeline'] as { action: string; lane: string; label: string; timeMs: number; anomaly: boolean }[];
    expect(timeline.map((event) => event.lane)).toEqual([
      'budget',
      'budget',
      'budget',
      'auto-shutdown',
      'auto-shutdown',
      'auto-shutdown',
      'promote',
      'budget',
    ]);
    expect(timeline.map((event) => event.label).slice(3, 6)).toEqual(['armed', 'fired', 'failed']);
    expect(timeline.map((event) => event.timeMs)).toEqual([...timeline.map((event) => event.timeMs)].sort((a, b) => a - b));
    expect(billing.body['phases'].map((span: { phase: string }) => span.phase)).toEqual(['idle', 'armed', 'shut-down', 'shutdown-failed']);
    expect(billing.body['phases'].at(-1).toMs).toBeNull();

    const orders = await api<Record<string, any>>('/api/app?name=orders-api');
    const firedId = await idOf('app:budget:auto-shutdown:fired', 'orders-api');
    expect(orders.body['anomalies']).toEqual([expect.objectContaining({ kind: 'fired_without_armed', deliveryIds: [firedId] })]);
    expect(orders.body['timeline'].filter((event: { anomaly: boolean }) => event.anomaly).map((event: { id: string }) => event.id)).toEqual(
      [firedId],
    );
  });

  it('answers 404 for an app with no events', async () => {
    const { status, body } = await api<{ error: { code: string } }>('/api/app?name=no-such-app');
    expect(status).toBe(404);
    expect(body.error.code).toBe('not_found');
  });

  it('has one app route: /api/app?name=, not a path segment (which cannot name an app called "..")', async () => {
    const { status, body } = await api<{ error: { code: string; message: string } }>('/api/apps/billing-api');
    expect(status).toBe(404);
    expect(body.error).toEqual({ code: 'not_found', message: 'no API at /api/apps/billing-api' });
  });
});

describe('live updates', () => {
  it('streams a change event at once, and another when a delivery arrives', async () => {
    const controller = new AbortController();
    const response = await fetch(`${fixture.console.origin}/api/stream`, { headers: { cookie }, signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const nextChange = async () => {
      for (;;) {
        const index = text.indexOf('event: change\ndata: ');
        const end = index < 0 ? -1 : text.indexOf('\n\n', index);
        if (end >= 0) {
          const data = JSON.parse(text.slice(index + 'event: change\ndata: '.length, end)) as { stats: { total: number } };
          text = text.slice(end + 2);
          return data;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        text += value;
      }
    };
    const first = await nextChange();
    await fixture.send(createTestEvent('app:budget:threshold', { data: { app: 'payments-api' } }));
    const second = await nextChange();
    expect(second.stats.total).toBe(first.stats.total + 1);
    controller.abort();
  });
});

describe('timeline labels', () => {
  it('name the event within its lane, and keep the whole action in the catch-all lane', async () => {
    const { laneOf, labelOf } = await import('../../src/console/server/api/apps.js');
    const label = (action: string, status = 'success') => labelOf({ action, status, timestamp: '2026-11-23T00:00:00Z', data: {} } as never);
    expect([laneOf('app:budget:auto-shutdown:armed'), label('app:budget:auto-shutdown:armed')]).toEqual(['auto-shutdown', 'armed']);
    expect([laneOf('app:budget:cap'), label('app:budget:cap')]).toEqual(['budget', 'cap']);
    expect([laneOf('release:promote'), label('release:promote', 'start')]).toEqual(['promote', 'promote start']);
    // The status is added only when the action's last word does not already say it (issue 21).
    expect([laneOf('app:promote:errored'), label('app:promote:errored', 'error')]).toEqual(['promote', 'errored']);
    expect(label('app:promote:cancelled', 'cancelled')).toBe('cancelled');
    expect(label('app:budget:auto-shutdown:failed', 'failure')).toBe('failed');
    expect(label('app:budget:auto-shutdown:noop', 'skipped')).toBe('noop skipped');
    expect(label('app:budget:cap', 'error')).toBe('cap error');
    expect([laneOf('build:create'), label('build:create')]).toEqual(['build', 'create']);
    expect([laneOf('app:scale-override:toggled'), label('app:scale-override:toggled')]).toEqual(['scale', 'toggled']);
    expect([laneOf('release:create'), label('release:create')]).toEqual(['other', 'release create']);
    expect([laneOf('app:create'), label('app:create')]).toEqual(['other', 'create']);
  });
});

describe('awkward inputs', () => {
  it('opens apps named "." and ".." (by query parameter: they cannot be path segments)', async () => {
    for (const name of ['.', '..']) {
      await fixture.send(createTestEvent('app:budget:threshold', { data: { app: name } }));
      const { status, body } = await api<{ app: { app: string } }>(`/api/app?name=${encodeURIComponent(name)}`);
      expect(status, name).toBe(200);
      expect(body.app.app).toBe(name);
    }
    expect((await api('/api/app?name=')).status).toBe(404);
  });

  it('refuses a NUL in a filter and a limit that is not plain digits, with 400 bad_filter', async () => {
    for (const query of ['app=%00', 'action=app:budget:cap%00', 'limit=0x10', 'limit=1e2', 'limit=%2010']) {
      const { status, body } = await api<{ error: { code: string } }>(`/api/deliveries?${query}`);
      expect(status, query).toBe(400);
      expect(body.error.code).toBe('bad_filter');
    }
  });

  it('answers HEAD like GET, without a body', async () => {
    const response = await fetch(`${fixture.console.origin}/api/overview`, { method: 'HEAD', headers: { cookie } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    const stream = await fetch(`${fixture.console.origin}/api/stream`, { method: 'HEAD', headers: { cookie } });
    expect(stream.status).toBe(200);
  });
});

describe('workers and refusals', () => {
  it('the overview lists the live worker and the refusals of the last hour; a move with no worker running says liveWorkers 0', async () => {
    const forged = await fetch(fixture.receiverUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
      body: JSON.stringify(createTestEvent('app:budget:cap')),
    });
    expect(forged.status).toBe(401);
    await fixture.inbox.close(); // writes the counted refusal now, not in 5 s
    const { body } = await api<{
      workers: { live: number; gone: number; list: { id: string; live: boolean; pid: number }[] };
      refusals: { total: number; byCode: { code: string; count: number }[] };
    }>('/api/overview');
    expect(body.workers).toMatchObject({ live: 1, gone: 0, list: [{ live: true, pid: process.pid }] });
    expect(body.refusals).toEqual({ total: 1, byCode: [{ code: 'signature_mismatch', count: 1 }] });

    fixture.failing.add('app:budget:clear');
    await fixture.send(createTestEvent('app:budget:clear', { data: { app: 'gamma-api' } }));
    await eventually(async () => (await fixture.inbox.stats()).dead === 1, 'a dead delivery');
    fixture.failing.clear();
    await fixture.stopWorkers();
    expect((await api<{ workers: { live: number } }>('/api/overview')).body.workers.live).toBe(0);
    expect(await post('/api/retry-dead')).toEqual({ status: 200, body: { moved: 1, liveWorkers: 0 } });
    expect((await fixture.inbox.stats()).pending).toBe(1);
    fixture.startWorker();
    await eventually(async () => (await fixture.inbox.stats()).pending === 0, 'the retried delivery to run once a worker started');
  });
});
