/**
 * Issue 18, point 1: a delivery that repeats an earlier event with new times is kept as its own row
 * in state `duplicate`. The console shows it (the log filtered by that state, the delivery with the
 * row it repeats, the overview's count) and its Retry runs it; a byte-identical copy adds no row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEvent } from '../../src/testing/test-event.js';
import { callApi, eventually, openConsoleFixture, type ConsoleFixture } from './console-fixture.js';

let fixture: ConsoleFixture;
let cookie: string;

const api = <T = Record<string, unknown>>(path: string, init?: RequestInit) => callApi<T>(fixture, cookie, path, init);

const TICK = 'tick-2026-04-27T10:30:00Z-1f0c9a7e5b2d4c3e8a9b0c1d2e3f4a5b';
const failed = (time: string) =>
  createTestEvent('app:budget:auto-shutdown:failed', {
    timestamp: time,
    data: { app: 'billing-api', tick_id: TICK, failed_services: 'worker', partial_state: '1', failed_at: time },
  });

const ids: { first?: string; repeat?: string } = {};

beforeAll(async () => {
  fixture = await openConsoleFixture();
  const response = await fetch(fixture.console.url, { redirect: 'manual' });
  cookie = response.headers.get('set-cookie')!.split(';')[0]!;
  const t = Math.floor(Date.now() / 1000);
  expect(await fixture.send(failed('2026-04-27T10:31:00.1Z'), { timestamp: t })).toEqual({ status: 200, body: { status: 'accepted' } });
  // The same bytes again (a proxy re-send): answered duplicate, no row.
  expect(await fixture.send(failed('2026-04-27T10:31:00.1Z'), { timestamp: t })).toEqual({ status: 200, body: { status: 'duplicate' } });
  // The same event with new times: answered duplicate, kept as a row.
  expect(await fixture.send(failed('2026-04-27T10:31:00.9Z'))).toEqual({ status: 200, body: { status: 'duplicate' } });
  const rows = (await fixture.inbox.list({ order: 'asc' })).deliveries;
  expect(rows.map((row) => row.state)).toEqual(['pending', 'duplicate']);
  [ids.first, ids.repeat] = [rows[0]!.id, rows[1]!.id];
});
afterAll(() => fixture?.close());

describe('a duplicate row in the console', () => {
  it('is listed under state=duplicate, pointing at the row it repeats', async () => {
    const { status, body } = await api<{ deliveries: { id: string; state: string; duplicateOf: string | null }[] }>(
      '/api/deliveries?state=duplicate',
    );
    expect(status).toBe(200);
    expect(body.deliveries.map((row) => [row.id, row.state, row.duplicateOf])).toEqual([[ids.repeat, 'duplicate', ids.first]]);
  });

  it('shows its event and the row it repeats; the overview counts it', async () => {
    const { status, body } = await api<Record<string, any>>(`/api/deliveries/${ids.repeat}`);
    expect(status).toBe(200);
    expect(body['delivery']).toMatchObject({
      id: ids.repeat,
      state: 'duplicate',
      duplicateOf: ids.first,
      attempts: [],
      event: { data: { failed_at: '2026-04-27T10:31:00.9Z', tick_id: TICK } },
    });
    expect((await api<Record<string, any>>(`/api/deliveries/${ids.first}`)).body['delivery'].duplicateOf).toBeNull();
    const overview = await api<{ stats: Record<string, number> }>('/api/overview');
    expect(overview.body.stats).toMatchObject({ pending: 1, duplicate: 1, total: 2 });
  });

  it('Retry runs it: 200 moved 1, then done; retrying it again is 409', async () => {
    fixture.startWorker();
    await eventually(
      async () => (await api<{ workers: { live: number } }>('/api/overview')).body.workers.live === 1,
      'the worker to be live',
    );
    const post = (path: string) =>
      api(path, { method: 'POST', headers: { origin: fixture.console.origin, 'content-type': 'application/json' }, body: '{}' });
    expect(await post(`/api/deliveries/${ids.repeat}/retry`)).toEqual({ status: 200, body: { moved: 1, liveWorkers: 1 } });
    await eventually(async () => (await fixture.inbox.stats()).done === 2, 'both deliveries to be done');
    expect((await post(`/api/deliveries/${ids.repeat}/retry`)).status).toBe(409);
  });
});
