import { afterEach, describe, expect, it } from 'vitest';
import { createInbox } from '../../src/inbox.js';
import {
  compareEvents,
  createRackState,
  createReceiver,
  type AnyWebhookEvent,
  type PhaseTransition,
  type RackState,
} from '../../src/index.js';
import { createSignedRequestSync } from '../../src/testing/index.js';
import { openDatabase, type TestDatabase } from '../inbox/databases.js';
import { APP, HOUR, MINUTE, at, event, freshApp, shutdown, tickId } from './events.js';

/**
 * The edges of `apply`: the window (events that left it), events it cannot place (no app, a
 * timestamp that is not RFC 3339), unknown actions, and the two ways a real receiver feeds it:
 * live from a receiver, and rebuilt from stored deliveries after a restart.
 */

const STEP = 15 * MINUTE;
const WINDOW = 24 * HOUR;

/** 210 events of one app (noops every 15 minutes, about 50 hours), with a lifecycle across the window edge. */
function longHistory(): AnyWebhookEvent[] {
  const events: AnyWebhookEvent[] = [];
  for (let i = 0; i < 200; i++) events.push(shutdown('noop', at(i * STEP), tickId(1000 + i, i * STEP)));
  const armedTick = tickId(30, 30 * STEP);
  events.push(
    // Finished long ago: forgotten once compacted.
    event('release:promote', at(2 * STEP + 1), { id: 'ROLDFINISHED', actor: 'dana@example.com' }),
    event('app:promote:completed', at(3 * STEP + 1), { id: 'ROLDFINISHED', actor: 'dana@example.com' }),
    // Started long ago and never ended: kept.
    event('release:promote', at(4 * STEP + 1), { id: 'RSTILLRUNNING', actor: 'dana@example.com' }),
    // An anomaly whose events all left the window.
    shutdown('fired', at(5 * STEP + 1), tickId(5, 5 * STEP)),
    // A sequence whose start left the window and whose end is inside it.
    event('app:budget:cap', at(29 * STEP + 1)),
    shutdown('armed', at(30 * STEP + 1), armedTick),
    shutdown('fired', at(40 * STEP + 1), armedTick),
    event('app:budget:set', at(50 * STEP + 1), { new_action: 'auto-shutdown' }),
    shutdown('restored', at(150 * STEP + 1), armedTick, { actor: 'ops@example.com' }),
    event('app:scale-override:toggled', at(170 * STEP + 1), { service: 'web', state: 'on' }),
  );
  // In the order they happened: a history applied as it was sent.
  return events.sort(compareEvents);
}

function applyAll(events: readonly AnyWebhookEvent[], options = {}): RackState {
  const state = createRackState(options);
  for (const e of events) expect(state.apply(e).applied).toBe(true);
  return state;
}

describe('the window', () => {
  it('an event that sorts before the compacted part is outside_window, and changes nothing', () => {
    const state = applyAll(longHistory());
    const before = { apps: state.apps(), anomalies: state.anomalies() };
    const tooLate = [
      event('app:budget:threshold', at(10 * STEP + 1)),
      shutdown('armed', at(6 * STEP), tickId(6, 6 * STEP)),
      // A copy of a compacted event is too late as well (it can no longer be told from a new one).
      shutdown('noop', at(0), tickId(1000, 0)),
    ];
    for (const e of tooLate)
      expect(state.apply(e)).toEqual({ applied: false, app: APP, reason: 'outside_window', late: false, transitions: [] });
    expect({ apps: state.apps(), anomalies: state.anomalies() }).toEqual(before);
  });

  it('the window is at least windowMs: an event within it, even late, is still placed', () => {
    const state = applyAll(longHistory());
    const newest = 199 * STEP;
    const late = event('app:budget:threshold', at(newest - WINDOW + MINUTE));
    expect(state.apply(late)).toEqual({ applied: true, app: APP, late: true, transitions: [] });
    expect(state.app(APP)!.budget.lastThresholdAt).toBe(late.timestamp);
  });

  it('compaction changes nothing: the state and anomalies equal those of the same events never compacted', () => {
    const events = longHistory();
    const compacted = applyAll(events);
    // The same events with a window wider than the history: nothing is compacted.
    const whole = applyAll(events, { windowMs: 30 * 24 * HOUR });
    expect(compacted.apps()).toEqual(whole.apps());
    expect(compacted.anomalies()).toEqual(whole.anomalies());
    const kept = compacted.app(APP)!;
    expect(kept.autoShutdown).toMatchObject({
      phase: 'restored',
      tickId: tickId(30, 30 * STEP),
      previous: { phase: 'shut-down', by: 'restored' },
    });
    expect(kept.breaker).toEqual({ state: 'tripped', since: at(29 * STEP + 1), by: 'app:budget:cap' });
    expect(Object.keys(kept.promotes).sort()).toEqual(['ROLDFINISHED', 'RSTILLRUNNING']);
    // Proof that compaction happened: the oldest event can no longer be placed.
    expect(compacted.apply(events[0]!).reason).toBe('outside_window');
  });

  it('keeps the newest 1,000 promotes per app, whatever the arrival order', () => {
    const promotes = Array.from({ length: 1050 }, (_, i) => ({
      action: 'release:promote',
      status: 'start',
      timestamp: at(i * 1000),
      data: { app: APP, rack: 'example-rack', id: `R${String(i).padStart(4, '0')}`, actor: 'dana@example.com' },
    }));
    const forward = applyAll(promotes as never);
    const backward = applyAll([...promotes].reverse() as never);
    const ids = Object.keys(forward.app(APP)!.promotes).sort();
    expect(ids).toHaveLength(1000);
    expect(ids[0]).toBe('R0050');
    expect(backward.apps()).toEqual(forward.apps());
  });

  it('a shutdown restored two days after it fired, with compaction in between, is no anomaly', () => {
    // Manual recovery: services stay down until someone resets the budget; noop ticks keep coming.
    const tick = tickId(1, STEP);
    const events = [
      ...Array.from({ length: 200 }, (_, i) => shutdown('noop', at(i * STEP + 2), tickId(1000 + i, i * STEP))),
      shutdown('armed', at(STEP), tick),
      shutdown('fired', at(5 * STEP), tick),
      shutdown('restored', at(190 * STEP), tick, { actor: 'ops@example.com' }),
    ].sort(compareEvents);
    const state = applyAll(events);
    expect(state.app(APP)!.autoShutdown).toMatchObject({
      phase: 'restored',
      tickId: tick,
      previous: { phase: 'shut-down', by: 'restored' },
    });
    // Event time is far past the grace period: a missing partner would be reported by now.
    expect(state.anomalies()).toEqual([]);
    // Proof that compaction happened: the armed of the same tick can no longer be placed.
    expect(state.apply(shutdown('armed', at(STEP), tick)).reason).toBe('outside_window');
  });
});

describe('events apply cannot place', () => {
  const noApp = [
    { action: 'rack:params:set', status: 'success', timestamp: at(0), data: { rack: 'example-rack', actor: 'system' } },
    { action: 'app:budget:cap', status: 'success', timestamp: at(0), data: { app: '', rack: 'example-rack' } },
    // app:create names its app by data.name; without one there is none.
    { action: 'app:create', status: 'success', timestamp: at(0), data: { rack: 'example-rack' } },
    { action: 'app:budget:cap', status: 'success', timestamp: at(0), data: null },
  ];

  it.each(noApp.map((e) => [JSON.stringify(e.data), e] as const))('no app (%s): no_app', (_label, e) => {
    const state = createRackState();
    expect(state.apply(e as AnyWebhookEvent)).toEqual({ applied: false, reason: 'no_app', late: false, transitions: [] });
    expect(state.apps()).toEqual([]);
  });

  it.each(['2026-04-27 10:30:00Z', '2026-04-27T10:30:00', '2026-02-30T10:30:00Z', '2026-04-27T24:00:00Z', 'yesterday', ''])(
    'timestamp %j: invalid_timestamp',
    (timestamp) => {
      const state = createRackState();
      expect(state.apply(event('app:budget:cap', timestamp))).toEqual({
        applied: false,
        app: APP,
        reason: 'invalid_timestamp',
        late: false,
        transitions: [],
      });
      expect(state.apps()).toEqual([]);
      expect(state.anomalies()).toEqual([]);
    },
  );

  it('a timestamp with an offset is placed by the instant it names', () => {
    const state = createRackState();
    state.apply(shutdown('armed', '2026-04-27T12:30:00.5+02:00', tickId(1)));
    state.apply(shutdown('fired', at(HOUR), tickId(1)));
    expect(state.app(APP)!.autoShutdown).toMatchObject({ phase: 'shut-down', previous: { phase: 'armed' } });
  });
});

describe('unknown actions', () => {
  const unknown = (timestamp: string): AnyWebhookEvent => ({
    action: 'app:budget:forecast',
    status: 'success',
    timestamp,
    data: { app: APP, rack: 'example-rack', projected_usd: '120.00' },
  });

  it('are applied and change nothing but updatedAt', () => {
    const state = createRackState();
    state.apply(shutdown('armed', at(0), tickId(1)));
    state.apply(event('app:budget:cap', at(MINUTE)));
    const before = state.app(APP)!;
    expect(state.apply(unknown(at(HOUR)))).toEqual({ applied: true, app: APP, late: false, transitions: [] });
    expect(state.app(APP)).toEqual({ ...before, updatedAt: at(HOUR) });
  });

  it('late, they change nothing at all; twice, the second is a duplicate', () => {
    const state = createRackState();
    state.apply(event('app:budget:cap', at(HOUR)));
    const before = state.app(APP)!;
    expect(state.apply(unknown(at(0)))).toEqual({ applied: true, app: APP, late: true, transitions: [] });
    expect(state.app(APP)).toEqual(before);
    expect(state.apply(unknown(at(0)))).toEqual({ applied: false, app: APP, reason: 'duplicate', late: false, transitions: [] });
  });

  it('make an app known, idle and empty', () => {
    const state = createRackState();
    state.apply(unknown(at(0)));
    expect(state.apps()).toEqual([freshApp(APP, at(0))]);
  });
});

/** One app's day as the rack sends it, in timestamp order; delivered out of order below. */
function day(): AnyWebhookEvent[] {
  const tick = tickId(1, 0);
  return [
    event('app:budget:set', at(-HOUR), { new_action: 'auto-shutdown', new_cap_usd: '100.00', new_pct: '90' }),
    event('app:budget:threshold', at(-30 * MINUTE)),
    event('app:budget:cap', at(-1, 905_449)),
    shutdown('armed', at(0, 106_682), tick),
    shutdown('fired', at(HOUR, 583_120), tick),
    event('app:budget:reset', at(2 * HOUR)),
    shutdown('restored', at(2 * HOUR, 82_564), tick, { actor: 'ops@example.com' }),
    event('release:promote', at(3 * HOUR), { app: 'checkout-web', id: 'RPZXCVBNMAS', actor: 'ops@example.com' }),
    event('app:promote:errored', at(3 * HOUR + 5 * MINUTE), {
      app: 'checkout-web',
      id: 'RPZXCVBNMAS',
      actor: 'ops@example.com',
      message: 'deployment "web" exceeded its progress deadline',
    }),
  ];
}

const SECRET = 'rack-state-suite-secret';
/** Deliveries as they arrive: out of order, the :fired twice (a proxy retried it). */
const ARRIVAL = [4, 6, 0, 8, 3, 4, 1, 7, 2, 5];

function expectDayState(state: RackState) {
  const billing = state.app(APP)!;
  expect(billing.autoShutdown).toEqual({
    phase: 'restored',
    tickId: tickId(1, 0),
    since: at(2 * HOUR, 82_564),
    actor: 'ops@example.com',
    previous: { phase: 'shut-down', by: 'restored', at: at(2 * HOUR, 82_564), tickId: tickId(1, 0), actor: 'ops@example.com' },
  });
  // at-cap action auto-shutdown: the cap did not trip the deploy breaker.
  expect(billing.breaker).toEqual({ state: 'closed' });
  expect(billing.budget).toMatchObject({ atCapAction: 'auto-shutdown', lastCapAt: at(-1, 905_449), lastResetAt: at(2 * HOUR) });
  expect(state.app('checkout-web')!.promotes).toEqual({
    RPZXCVBNMAS: {
      releaseId: 'RPZXCVBNMAS',
      startedAt: at(3 * HOUR),
      actor: 'ops@example.com',
      outcome: 'errored',
      endedAt: at(3 * HOUR + 5 * MINUTE),
      message: 'deployment "web" exceeded its progress deadline',
    },
  });
  expect(state.anomalies()).toEqual([]);
}

describe('fed by a receiver', () => {
  it('receiver.onAny((event) => state.apply(event)) over signed deliveries in any order, duplicates included', async () => {
    const state = createRackState();
    const pages: PhaseTransition[] = [];
    state.onTransition((transition) => {
      if (transition.lifecycle === 'auto-shutdown' && transition.to === 'shut-down') pages.push(transition);
    });
    const receiver = createReceiver({ secrets: SECRET });
    receiver.onAny((e) => state.apply(e));
    const events = day();
    const outcomes = [];
    for (const index of ARRIVAL)
      outcomes.push((await receiver.receive(createSignedRequestSync(events[index]!, { secrets: SECRET }))).outcome);
    expect(outcomes).toEqual([
      'processed',
      'processed',
      'processed',
      'processed',
      'processed',
      'duplicate',
      'processed',
      'processed',
      'processed',
      'processed',
    ]);
    expectDayState(state);
    // The shutdown was told once, though its :fired came twice and its :armed after it.
    expect(pages.map(({ app, from, to, late }) => ({ app, from, to, late }))).toEqual([
      { app: APP, from: 'idle', to: 'shut-down', late: false },
    ]);
  });

  it('rebuilt after a restart from the events in stored order gives the same state', async () => {
    const live = createRackState();
    const stored: string[] = [];
    const receiver = createReceiver({ secrets: SECRET });
    receiver.onAny((e) => {
      stored.push(JSON.stringify(e));
      live.apply(e);
    });
    const events = day();
    for (const index of ARRIVAL) await receiver.receive(createSignedRequestSync(events[index]!, { secrets: SECRET }));
    // The restart: a new process reads what was persisted, in the order it was stored.
    const rebuilt = createRackState();
    for (const text of stored) rebuilt.apply(JSON.parse(text) as AnyWebhookEvent);
    expect(rebuilt.apps()).toEqual(live.apps());
    expect(rebuilt.anomalies()).toEqual(live.anomalies());
    expectDayState(rebuilt);
  });
});

describe('fed by an inbox (PostgreSQL), rebuilt from it after a restart', () => {
  let db: TestDatabase<'pg'> | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it('the worker feeds the live state; inbox.list in timestamp order rebuilds the same one', { timeout: 30_000 }, async () => {
    db = await openDatabase('pg');
    const inbox = createInbox({ database: db.database, table: db.table });
    await inbox.migrate();
    const live = createRackState();
    const receiver = createReceiver({ secrets: SECRET, inbox });
    receiver.onAny(live.apply);
    const events = day();
    for (const index of ARRIVAL) await receiver.receive(createSignedRequestSync(events[index]!, { secrets: SECRET }));
    const worker = inbox.work(receiver, { pollIntervalMs: 20 });
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
    expectDayState(live);

    const rebuilt = createRackState();
    let after: string | undefined;
    do {
      const page = await inbox.list({ limit: 4, includeEvents: true, ...(after === undefined ? {} : { after }) });
      for (const delivery of page.deliveries) {
        expect(delivery.event).toEqual((await inbox.get(delivery.id))!.event);
        rebuilt.apply(delivery.event!);
      }
      after = page.next;
    } while (after !== undefined);
    expect(rebuilt.apps()).toEqual(live.apps());
    expect(rebuilt.anomalies()).toEqual(live.anomalies());
    expect((await inbox.stats()).total).toBe(events.length);
  });
});

describe('each app has its own event time', () => {
  it("another app's far-future event moves neither this app's window nor its grace periods", () => {
    const budget = event('app:budget:set', at(0), { new_cap_usd: '500.00', new_action: 'block-new-deploys' });
    const fired = shutdown('fired', at(HOUR), tickId(7, HOUR));
    const future = event('app:budget:threshold', at(48 * HOUR), { app: 'other-app' });
    const first = applyAll([future, budget, fired]);
    const last = applyAll([budget, fired, future]);
    expect(first.apps()).toEqual(last.apps());
    expect(first.app(APP)!.budget.capUsd).toBe('500.00');
    // The :armed of this tick may still be in flight in this app's own time: no anomaly yet.
    expect(first.anomalies()).toEqual([]);
    expect(last.anomalies()).toEqual([]);
  });
});
