import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRackState, type AnyWebhookEvent } from '../../src/index.js';
import { APP, HOUR, MINUTE, at, event, shutdown, tickId } from './events.js';

/**
 * What the spec says cannot happen, judged in event time: the list depends only on the events
 * applied (the newest timestamp is the clock), never on the wall clock or the arrival order.
 */

const GRACE = 10 * MINUTE; // the default
const RELEASE = 'RKDVNPQHSTE';
const TICK = tickId(1);

/** Any event of another app that moves event time to `ms` (event time is rack-wide). */
// Event time moves with the app's own events: another app's clock cannot advance its grace periods.
const clock = (ms: number, ns = 0) => event('app:budget:threshold', at(ms, ns));

const start = (ms: number) => event('release:promote', at(ms), { id: RELEASE, actor: 'dana@example.com' });
const completed = (ms: number) => event('app:promote:completed', at(ms), { id: RELEASE, actor: 'dana@example.com' });
const errored = (ms: number) => event('app:promote:errored', at(ms), { id: RELEASE, actor: 'dana@example.com', message: 'rollout failed' });

function applyAll(events: readonly AnyWebhookEvent[], options = {}) {
  const state = createRackState(options);
  for (const e of events) state.apply(e);
  return state;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('promote_multiple_terminals', () => {
  it('two different terminals for one release: reported at once with the start and both terminals in timestamp order', () => {
    const s = start(0);
    const e = errored(2 * MINUTE);
    const c = completed(MINUTE);
    const state = applyAll([s, e, c]);
    expect(state.anomalies()).toEqual([
      {
        kind: 'promote_multiple_terminals',
        app: APP,
        id: RELEASE,
        message: expect.stringContaining(RELEASE),
        events: [s, c, e],
      },
    ]);
  });

  it('the same terminal delivered twice is a duplicate, not an anomaly', () => {
    const state = applyAll([start(0), completed(MINUTE), completed(MINUTE)]);
    expect(state.anomalies()).toEqual([]);
  });

  it('without a start: both terminals, and (after the grace period) the missing start too', () => {
    const c = completed(MINUTE);
    const e = errored(2 * MINUTE);
    const state = applyAll([e, c, clock(MINUTE + GRACE)]);
    expect(state.anomalies()).toEqual([
      { kind: 'promote_multiple_terminals', app: APP, id: RELEASE, message: expect.any(String), events: [c, e] },
      {
        kind: 'promote_terminal_without_start',
        app: APP,
        id: RELEASE,
        message: expect.stringContaining('app:promote:completed'),
        events: [c, e],
      },
    ]);
  });
});

describe('promote_terminal_without_start', () => {
  it('appears only once event time is a grace period past the terminal', () => {
    const state = createRackState();
    const c = completed(0);
    state.apply(c);
    expect(state.anomalies()).toEqual([]);
    state.apply(clock(GRACE - 1, 999_999)); // 1 ns short
    expect(state.anomalies()).toEqual([]);
    state.apply(clock(GRACE));
    expect(state.anomalies()).toEqual([
      { kind: 'promote_terminal_without_start', app: APP, id: RELEASE, message: expect.stringContaining(RELEASE), events: [c] },
    ]);
  });

  it('never by the wall clock: hours of real time pass and nothing is reported', () => {
    vi.useFakeTimers({ now: Date.parse(at(0)) });
    const state = createRackState();
    state.apply(completed(0));
    vi.setSystemTime(Date.parse(at(48 * HOUR)));
    expect(state.anomalies()).toEqual([]);
  });

  it('a late start makes it disappear', () => {
    const state = applyAll([completed(MINUTE), clock(HOUR)]);
    expect(state.anomalies().map((a) => a.kind)).toEqual(['promote_terminal_without_start']);
    state.apply(start(0));
    expect(state.anomalies()).toEqual([]);
  });

  it('a start of another release does not count', () => {
    const state = applyAll([event('release:promote', at(0), { id: 'RPZXCVBNMAS' }), completed(MINUTE), clock(HOUR)]);
    expect(state.anomalies().map((a) => [a.kind, a.id])).toEqual([['promote_terminal_without_start', RELEASE]]);
  });
});

describe('fired_without_armed', () => {
  it('a :fired whose tick has no :armed, a grace period later', () => {
    const state = createRackState();
    const fired = shutdown('fired', at(HOUR), TICK);
    state.apply(fired);
    state.apply(clock(HOUR + GRACE - 1));
    expect(state.anomalies()).toEqual([]);
    state.apply(clock(HOUR + GRACE));
    expect(state.anomalies()).toEqual([
      { kind: 'fired_without_armed', app: APP, id: TICK, message: expect.stringContaining(TICK), events: [fired] },
    ]);
  });

  it('an :armed of another tick does not count', () => {
    const state = applyAll([shutdown('armed', at(0), tickId(2)), shutdown('fired', at(HOUR), TICK), clock(2 * HOUR)]);
    expect(state.anomalies().map((a) => [a.kind, a.id])).toEqual([['fired_without_armed', TICK]]);
  });

  it('its late :armed makes it disappear', () => {
    const state = applyAll([shutdown('fired', at(HOUR), TICK), clock(2 * HOUR)]);
    expect(state.anomalies()).toHaveLength(1);
    state.apply(shutdown('armed', at(0), TICK));
    expect(state.anomalies()).toEqual([]);
  });

  it('a dry run is not the real lifecycle: a dry-run :fired or :restored alone is no anomaly', () => {
    // dry_run "true": "the rack only simulated the action"; the state ignores such events, so must the checks.
    const state = applyAll([
      shutdown('fired', at(0), TICK, { dry_run: 'true' }),
      shutdown('restored', at(MINUTE), tickId(2), { dry_run: 'true' }),
      clock(HOUR),
    ]);
    expect(state.app(APP)!.autoShutdown).toEqual({ phase: 'idle' });
    expect(state.anomalies()).toEqual([]);
  });

  it('nor does a dry-run :armed hide a real :fired without its :armed', () => {
    const fired = shutdown('fired', at(HOUR), TICK);
    const state = applyAll([shutdown('armed', at(0), TICK, { dry_run: 'true' }), fired, clock(2 * HOUR)]);
    expect(state.anomalies()).toEqual([{ kind: 'fired_without_armed', app: APP, id: TICK, message: expect.any(String), events: [fired] }]);
  });
});

describe('restored_without_fired', () => {
  it('a :restored whose tick has no :fired, a grace period later', () => {
    const state = createRackState();
    const armed = shutdown('armed', at(0), TICK);
    const restored = shutdown('restored', at(2 * HOUR), TICK, { actor: 'ops@example.com' });
    state.apply(restored);
    state.apply(armed);
    expect(state.anomalies()).toEqual([]);
    state.apply(clock(2 * HOUR + GRACE));
    expect(state.anomalies()).toEqual([
      { kind: 'restored_without_fired', app: APP, id: TICK, message: expect.stringContaining(TICK), events: [restored] },
    ]);
  });

  it('its late :fired makes it disappear (and the armed keeps fired_without_armed away)', () => {
    const state = applyAll([shutdown('armed', at(0), TICK), shutdown('restored', at(2 * HOUR), TICK), clock(3 * HOUR)]);
    expect(state.anomalies().map((a) => a.kind)).toEqual(['restored_without_fired']);
    state.apply(shutdown('fired', at(HOUR), TICK));
    expect(state.anomalies()).toEqual([]);
  });

  it('a shutdown that failed is restored too: no anomaly (rack-api.md section 4, rule 4)', () => {
    const state = applyAll([shutdown('armed', at(0), TICK), shutdown('failed', at(HOUR), TICK), shutdown('restored', at(2 * HOUR), TICK)]);
    state.apply(clock(3 * HOUR));
    expect(state.anomalies()).toEqual([]);
  });

  it('a :restored without :armed or :fired is only restored_without_fired', () => {
    const restored = shutdown('restored', at(0), TICK);
    const state = applyAll([restored, clock(HOUR)]);
    expect(state.anomalies()).toEqual([
      { kind: 'restored_without_fired', app: APP, id: TICK, message: expect.any(String), events: [restored] },
    ]);
  });
});

describe('every kind at once, across apps', () => {
  it('listed by app, each with its app, id and events', () => {
    const other = 'checkout-web';
    const fired = shutdown('fired', at(0), tickId(3), { app: other });
    const restored = shutdown('restored', at(MINUTE), tickId(4));
    const c = completed(2 * MINUTE);
    const e = errored(3 * MINUTE);
    // Each app's grace period runs on its own events' time.
    const state = applyAll([restored, e, fired, c, clock(HOUR), event('app:budget:threshold', at(HOUR), { app: other })]);
    expect(state.anomalies().map(({ kind, app, id, events }) => ({ kind, app, id, events }))).toEqual([
      { kind: 'promote_multiple_terminals', app: APP, id: RELEASE, events: [c, e] },
      { kind: 'promote_terminal_without_start', app: APP, id: RELEASE, events: [c, e] },
      { kind: 'restored_without_fired', app: APP, id: tickId(4), events: [restored] },
      { kind: 'fired_without_armed', app: other, id: tickId(3), events: [fired] },
    ]);
  });
});

describe('options', () => {
  it('gracePeriodMs: 0 reports at once', () => {
    const c = completed(0);
    expect(applyAll([c], { gracePeriodMs: 0 }).anomalies()).toEqual([
      { kind: 'promote_terminal_without_start', app: APP, id: RELEASE, message: expect.any(String), events: [c] },
    ]);
  });

  it('a custom gracePeriodMs is the boundary, to the nanosecond', () => {
    const state = createRackState({ gracePeriodMs: 90_000 });
    state.apply(shutdown('fired', at(0, 5), TICK));
    state.apply(clock(90_000, 4));
    expect(state.anomalies()).toEqual([]);
    state.apply(clock(90_000, 5));
    expect(state.anomalies().map((a) => a.kind)).toEqual(['fired_without_armed']);
  });

  it.each([0, 1000, 24 * HOUR - 1, Number.NaN, Number.NEGATIVE_INFINITY])('windowMs %s is a RangeError', (windowMs) => {
    expect(() => createRackState({ windowMs })).toThrow(RangeError);
  });

  it('windowMs of 24 h or more is accepted', () => {
    expect(() => createRackState({ windowMs: 24 * HOUR })).not.toThrow();
    expect(() => createRackState({ windowMs: 7 * 24 * HOUR })).not.toThrow();
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('gracePeriodMs %s is a RangeError', (gracePeriodMs) => {
    expect(() => createRackState({ gracePeriodMs })).toThrow(RangeError);
  });
});
