/**
 * The console API's history and attention (issue 20 point 6) and its phase bands seeded from
 * before the timeline's window (issue 21 point 4), over a real inbox on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUp } from '../kit/setup.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { createSignedRequestSync } from '../../src/testing/signed-request.js';
import { createTestEvent, rackTickId, rackTimestamp } from '../../src/testing/test-event.js';
import { TIMELINE_LIMIT } from '../../src/console/server/api/apps.js';
import { eventually, openConsoleFixture, type ConsoleFixture } from './console-fixture.js';

setUp({ testTimeoutMs: 120_000, hookTimeoutMs: 120_000, pglite: false });

let fixture: ConsoleFixture;

async function api<T = Record<string, unknown>>(path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${fixture.console.origin}${path}`, { headers: { authorization: `Bearer ${fixture.console.token}` } });
  return { status: response.status, body: (await response.json()) as T };
}

interface Hour {
  hour: string;
  accepted: number;
  refused: number | null;
  dead: number;
  processed: number;
}

beforeAll(async () => {
  fixture = await openConsoleFixture();
});
afterAll(() => fixture?.close());

describe('history and attention', () => {
  it('answers each hour of the day or the week, and refuses another span', async () => {
    fixture.failing.add('app:budget:cap');
    expect((await fixture.send(createTestEvent('app:budget:cap', { data: { app: 'needy-api' } }))).status).toBe(200);
    expect((await fixture.send(createTestEvent('app:budget:threshold', { data: { app: 'calm-api' } }))).status).toBe(200);
    fixture.startWorker();
    await eventually(async () => (await fixture.inbox.stats()).dead === 1 && (await fixture.inbox.stats()).pending === 0, 'one dead');

    const day = await api<{ span: string; hours: Hour[]; refusalsRecorded: boolean }>('/api/history');
    expect(day.status).toBe(200);
    expect(day.body.span).toBe('day');
    expect(day.body.hours).toHaveLength(24);
    expect(day.body.refusalsRecorded).toBe(true);
    expect(day.body.hours.reduce((sum, hour) => sum + hour.accepted, 0)).toBe(2);
    expect(day.body.hours.reduce((sum, hour) => sum + hour.dead, 0)).toBe(1);
    expect(day.body.hours.every((hour) => hour.refused === 0)).toBe(true); // recorded, and nothing was refused
    const week = await api<{ hours: Hour[] }>('/api/history?span=week');
    expect(week.body.hours).toHaveLength(168);
    const bad = await api<{ error: { code: string; message: string } }>('/api/history?span=year');
    expect(bad).toEqual({ status: 400, body: { error: { code: 'bad_filter', message: 'span must be day or week, got "year"' } } });

    const { body } = await api<{ apps: Array<{ app: string; dead: number; failing: number; pending: number }> }>('/api/apps');
    expect(body.apps.find((app) => app.app === 'needy-api')).toMatchObject({ dead: 1, failing: 0, pending: 0 });
    expect(body.apps.find((app) => app.app === 'calm-api')).toMatchObject({ dead: 0, failing: 0, pending: 0 });

    // The dead delivery's attempt: the class and stack of what the handler threw.
    const id = (await fixture.inbox.list({ state: 'dead' })).deliveries[0]!.id;
    const detail = await api<{ delivery: { attempts: Array<{ errorClass: string | null; errorStack: string | null; error: string }> } }>(
      `/api/deliveries/${id}`,
    );
    expect(detail.body.delivery.attempts[0]).toMatchObject({ errorClass: 'Error', error: 'pager unreachable for app:budget:cap' });
    expect(detail.body.delivery.attempts[0]!.errorStack).toMatch(/^Error: pager unreachable for app:budget:cap\n\s+at /);
  });
});

describe('phase bands', () => {
  it('start in the phase the app was in before the newest events, not idle', async () => {
    const receiver = createReceiver({ secrets: fixture.key, inbox: fixture.inbox });
    const receive = (event: object) => {
      const request = createSignedRequestSync(event, { secrets: fixture.key });
      return receiver.receive({ body: request.bytes, headers: request.headers });
    };
    const app = 'armed-long-ago';
    const start = Date.now() - 6 * 3_600_000;
    const tick = rackTickId(new Date(start));
    const armed = await receive(
      createTestEvent('app:budget:auto-shutdown:armed', {
        timestamp: rackTimestamp(new Date(start)),
        data: {
          app,
          tick_id: tick,
          scheduled_at: new Date(start).toISOString().replace(/\.\d+Z$/, 'Z'),
          expected_shutdown_at: new Date(start + 12 * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      }),
    );
    expect(armed.outcome).toBe('accepted');
    // More events than the timeline shows, all after :armed, none of them ending it.
    for (let i = 1; i <= TIMELINE_LIMIT; i++) {
      const result = await receive(
        createTestEvent('app:budget:threshold', { timestamp: rackTimestamp(new Date(start + i * 30_000)), data: { app } }),
      );
      expect(result.outcome).toBe('accepted');
    }
    const { status, body } = await api<{ timeline: unknown[]; phases: Array<{ phase: string; toMs: number | null }> }>(
      `/api/app?name=${app}`,
    );
    expect(status).toBe(200);
    expect(body.timeline).toHaveLength(TIMELINE_LIMIT);
    expect(body.phases).toEqual([{ phase: 'armed', fromMs: start + 30_000, toMs: null }]);
  });
});
