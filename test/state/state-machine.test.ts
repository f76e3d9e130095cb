import { describe, expect, it } from 'vitest';
import { createRackState, type AnyWebhookEvent, type AutoShutdownPhase, type AutoShutdownState, type RackState } from '../../src/index.js';
import {
  APP,
  CANCEL_REASONS,
  HOUR,
  MINUTE,
  at,
  event,
  freshApp,
  shutdown,
  tickId,
  type CancelReason,
  type ShutdownKind,
} from './events.js';

/**
 * Every row of the auto-shutdown table (src/state/auto-shutdown.ts, docs/rack-state.md), the
 * breaker, the budget, the overrides, promotes and the last build and release, each asserted as
 * the exact state a dashboard would read.
 */

const PHASES: readonly AutoShutdownPhase[] = ['idle', 'armed', 'shut-down', 'shutdown-failed', 'restored'];
const TICK = tickId(1);
const NEXT_TICK = tickId(2, 3 * HOUR);
const NOW = at(3 * HOUR, 250_001); // after every setup below
const SCHEDULED = '2026-04-27T10:30:00Z';
const EXPECTED_SHUTDOWN = '2026-04-27T11:30:00Z';

/** The events that bring the app into `phase`, all before NOW. */
function setup(phase: AutoShutdownPhase): AnyWebhookEvent[] {
  const armed = shutdown('armed', at(106, 682_533), TICK);
  switch (phase) {
    case 'idle':
      return [event('app:budget:threshold', at(-HOUR))];
    case 'armed':
      return [armed];
    case 'shut-down':
      return [armed, shutdown('fired', at(HOUR, 583_120), TICK)];
    case 'shutdown-failed':
      return [armed, shutdown('failed', at(HOUR, 927_361), TICK)];
    case 'restored':
      return [armed, shutdown('fired', at(HOUR, 583_120), TICK), shutdown('restored', at(2 * HOUR), TICK, { actor: 'ops@example.com' })];
  }
}

function stateIn(phase: AutoShutdownPhase): { state: RackState; before: AutoShutdownState } {
  const state = createRackState();
  for (const e of setup(phase)) expect(state.apply(e).applied).toBe(true);
  const before = state.app(APP)!.autoShutdown;
  expect(before.phase).toBe(phase);
  return { state, before };
}

/** The transitions `apply` must return when the phase moved from `from` to `to`. */
function moved(from: string, to: string, e: AnyWebhookEvent, late = false) {
  return from === to ? [] : [{ app: APP, lifecycle: 'auto-shutdown', from, to, event: e, late }];
}

/**
 * An app in `from` takes `e` and moves to `to`: the transition `apply` returns, and the phase as a
 * dashboard reads it (since NOW, by `actor`, the phase it left kept as `previous`).
 */
function expectMoved(
  from: AutoShutdownPhase,
  e: AnyWebhookEvent,
  expected: { to: AutoShutdownPhase; by: ShutdownKind; tickId: string; actor?: string; cancelReason?: CancelReason },
): void {
  const { to, by, tickId, actor = 'system', cancelReason } = expected;
  const { state } = stateIn(from);
  expect(state.apply(e).transitions).toEqual(moved(from, to, e));
  expect(state.app(APP)!.autoShutdown).toEqual({
    phase: to,
    tickId,
    since: NOW,
    actor,
    previous: { phase: from, by, ...(cancelReason === undefined ? {} : { cancelReason }), at: NOW, tickId, actor },
  });
}

/** An app in `from` takes `e` and nothing changes. */
function expectIgnored(from: AutoShutdownPhase, e: AnyWebhookEvent): void {
  const { state, before } = stateIn(from);
  expect(state.apply(e).transitions).toEqual([]);
  expect(state.app(APP)!.autoShutdown).toEqual(before);
}

describe('the phases the setups reach', () => {
  it('armed: the tick, the countdown and how idle ended', () => {
    expect(stateIn('armed').before).toEqual({
      phase: 'armed',
      tickId: TICK,
      since: '2026-04-27T10:30:00.106682533Z',
      scheduledAt: SCHEDULED,
      expectedShutdownAt: EXPECTED_SHUTDOWN,
      actor: 'system',
      previous: { phase: 'idle', by: 'armed', at: '2026-04-27T10:30:00.106682533Z', tickId: TICK, actor: 'system' },
    });
  });

  it('idle before any auto-shutdown event is just idle', () => {
    expect(stateIn('idle').before).toEqual({ phase: 'idle' });
  });
});

describe('armed: a new countdown from every phase', () => {
  it.each(PHASES)('from %s', (from) => {
    const { state } = stateIn(from);
    const armed = shutdown('armed', NOW, NEXT_TICK);
    const result = state.apply(armed);
    expect(result).toEqual({ applied: true, app: APP, late: false, transitions: moved(from, 'armed', armed) });
    expect(state.app(APP)!.autoShutdown).toEqual({
      phase: 'armed',
      tickId: NEXT_TICK,
      since: NOW,
      scheduledAt: '2026-04-27T13:30:00Z',
      expectedShutdownAt: '2026-04-27T14:30:00Z',
      actor: 'system',
      previous: { phase: from, by: 'armed', at: NOW, tickId: NEXT_TICK, actor: 'system' },
    });
  });

  it('without scheduled_at / expected_shutdown_at (older racks) the countdown fields are absent, not undefined', () => {
    const state = createRackState();
    const armed = shutdown('armed', NOW, NEXT_TICK);
    delete (armed.data as Record<string, string>)['scheduled_at'];
    delete (armed.data as Record<string, string>)['expected_shutdown_at'];
    state.apply(armed);
    const autoShutdown = state.app(APP)!.autoShutdown;
    expect(Object.keys(autoShutdown).sort()).toEqual(['actor', 'phase', 'previous', 'since', 'tickId']);
    expect(autoShutdown.phase).toBe('armed');
  });
});

describe('fired and failed: the shutdown happened or its retries ran out (from any phase, as the table says)', () => {
  it.each(PHASES)('fired from %s: shut-down, the countdown fields dropped', (from) => {
    expectMoved(from, shutdown('fired', NOW, TICK), { to: 'shut-down', by: 'fired', tickId: TICK });
  });

  it.each(PHASES)('failed from %s: shutdown-failed', (from) => {
    expectMoved(from, shutdown('failed', NOW, TICK), { to: 'shutdown-failed', by: 'failed', tickId: TICK });
  });
});

describe('cancelled: only an armed countdown, with every cancel_reason', () => {
  const reasons = Object.entries(CANCEL_REASONS) as [CancelReason, string][];

  it.each(reasons)('%s from armed: idle, the reason and the actor kept', (reason, actor) => {
    expectMoved('armed', shutdown('cancelled', NOW, TICK, { cancel_reason: reason, actor }), {
      to: 'idle',
      by: 'cancelled',
      tickId: TICK,
      actor,
      cancelReason: reason,
    });
  });

  const otherPhases = PHASES.filter((phase) => phase !== 'armed');
  it.each(otherPhases.flatMap((phase) => reasons.map(([reason, actor]) => [phase, reason, actor] as const)))(
    'from %s (%s): ignored',
    (from, reason, actor) => {
      const { state, before } = stateIn(from);
      const result = state.apply(shutdown('cancelled', NOW, TICK, { cancel_reason: reason, actor }));
      expect(result).toEqual({ applied: true, app: APP, late: false, transitions: [] });
      expect(state.app(APP)!.autoShutdown).toEqual(before);
      expect(state.app(APP)!.updatedAt).toBe(NOW);
    },
  );
});

describe('restored: services back from a shutdown or a failed one', () => {
  it.each(['shut-down', 'shutdown-failed'] as const)('from %s: restored, recovery pending', (from) => {
    expectMoved(from, shutdown('restored', NOW, TICK, { actor: 'ops@example.com' }), {
      to: 'restored',
      by: 'restored',
      tickId: TICK,
      actor: 'ops@example.com',
    });
  });

  it.each(['idle', 'armed', 'restored'] as const)('from %s: ignored', (from) => {
    expectIgnored(from, shutdown('restored', NOW, TICK));
  });
});

describe('dismissed: the recovery banner goes away', () => {
  it('from restored: idle', () => {
    expectMoved('restored', shutdown('dismissed', NOW, TICK, { actor: 'ops@example.com' }), {
      to: 'idle',
      by: 'dismissed',
      tickId: TICK,
      actor: 'ops@example.com',
    });
  });

  it.each(['idle', 'armed', 'shut-down', 'shutdown-failed'] as const)('from %s: ignored', (from) => {
    expectIgnored(from, shutdown('dismissed', NOW, TICK, { actor: 'ops@example.com' }));
  });
});

describe('expired: the manual-mode month rollover ends whatever was in flight', () => {
  const MONTH_END = tickId(9, 3 * HOUR);

  it.each(['armed', 'shut-down', 'shutdown-failed', 'restored'] as const)('from %s: idle', (from) => {
    expectMoved(from, shutdown('expired', NOW, MONTH_END), { to: 'idle', by: 'expired', tickId: MONTH_END });
  });

  it('from idle: ignored', () => {
    expectIgnored('idle', shutdown('expired', NOW, MONTH_END));
  });
});

describe('information and routine: no phase changes', () => {
  const FLAP_TICK = tickId(5, 3 * HOUR);

  it.each(PHASES)('flap-suppressed in %s is recorded as information only', (from) => {
    const { state, before } = stateIn(from);
    expect(state.apply(shutdown('flap-suppressed', NOW, FLAP_TICK)).transitions).toEqual([]);
    expect(state.app(APP)!.autoShutdown).toEqual({ ...before, lastFlapSuppressed: { at: NOW, tickId: FLAP_TICK } });
  });

  it('the last flap-suppressed survives later phase changes', () => {
    const { state } = stateIn('restored');
    state.apply(shutdown('flap-suppressed', NOW, FLAP_TICK));
    state.apply(shutdown('dismissed', at(4 * HOUR), TICK, { actor: 'ops@example.com' }));
    state.apply(shutdown('armed', at(5 * HOUR), NEXT_TICK));
    expect(state.app(APP)!.autoShutdown).toMatchObject({ phase: 'armed', lastFlapSuppressed: { at: NOW, tickId: FLAP_TICK } });
  });

  it.each(PHASES.flatMap((phase) => (['noop', 'simulated'] as const).map((kind) => [kind, phase] as const)))(
    '%s in %s changes nothing but updatedAt',
    (kind, from) => {
      const { state, before } = stateIn(from);
      const whole = state.app(APP)!;
      const result = state.apply(
        shutdown(kind, NOW, kind === 'noop' ? tickId(7, 3 * HOUR) : undefined, kind === 'simulated' ? { actor: 'ops@example.com' } : {}),
      );
      expect(result).toEqual({ applied: true, app: APP, late: false, transitions: [] });
      expect(state.app(APP)).toEqual({ ...whole, updatedAt: NOW });
      expect(state.app(APP)!.autoShutdown).toEqual(before);
    },
  );

  // Each of these would move the phase from the given one if it were not a dry run.
  const moving: readonly [ShutdownKind, AutoShutdownPhase][] = [
    ['armed', 'idle'],
    ['fired', 'armed'],
    ['failed', 'armed'],
    ['cancelled', 'armed'],
    ['restored', 'shut-down'],
    ['dismissed', 'restored'],
    ['expired', 'armed'],
    ['flap-suppressed', 'armed'],
  ];
  it.each(moving)('dry_run "true" on %s (in %s) changes nothing', (kind, from) => {
    const { state, before } = stateIn(from);
    const result = state.apply(
      shutdown(kind, NOW, NEXT_TICK, { dry_run: 'true', ...(kind === 'cancelled' ? { cancel_reason: 'cap-raised' } : {}) }),
    );
    expect(result.transitions).toEqual([]);
    expect(state.app(APP)!.autoShutdown).toEqual(before);
  });
});

describe('late events re-fold the lifecycle', () => {
  it('an :armed arriving after its :fired fills in history and tells nothing', () => {
    const state = createRackState();
    const fired = shutdown('fired', at(HOUR), TICK);
    const armed = shutdown('armed', at(0), TICK);
    expect(state.apply(fired).transitions).toEqual(moved('idle', 'shut-down', fired));
    expect(state.apply(armed)).toEqual({ applied: true, app: APP, late: true, transitions: [] });
    expect(state.app(APP)!.autoShutdown).toEqual({
      phase: 'shut-down',
      tickId: TICK,
      since: at(HOUR),
      actor: 'system',
      previous: { phase: 'armed', by: 'fired', at: at(HOUR), tickId: TICK, actor: 'system' },
    });
    expect(state.app(APP)!.updatedAt).toBe(at(HOUR));
  });

  it('a :restored that was ignored takes effect once its late :fired arrives', () => {
    const state = createRackState();
    state.apply(shutdown('armed', at(0), TICK));
    const restored = shutdown('restored', at(2 * HOUR), TICK, { actor: 'ops@example.com' });
    expect(state.apply(restored).transitions).toEqual([]);
    expect(state.app(APP)!.autoShutdown.phase).toBe('armed');
    const fired = shutdown('fired', at(HOUR), TICK);
    expect(state.apply(fired)).toEqual({ applied: true, app: APP, late: true, transitions: moved('armed', 'restored', fired, true) });
    expect(state.app(APP)!.autoShutdown).toMatchObject({
      phase: 'restored',
      since: at(2 * HOUR),
      previous: { phase: 'shut-down', by: 'restored' },
    });
  });

  it('events equal to the millisecond are ordered by their nanoseconds', () => {
    const state = createRackState();
    // cancelled 1 ns after armed, arriving first: without the nanoseconds the order would be a guess.
    state.apply(shutdown('cancelled', at(0, 2), TICK, { cancel_reason: 'manual-detected', actor: 'system' }));
    state.apply(shutdown('armed', at(0, 1), TICK));
    expect(state.app(APP)!.autoShutdown).toMatchObject({
      phase: 'idle',
      previous: { phase: 'armed', by: 'cancelled', cancelReason: 'manual-detected' },
    });
  });
});

describe('the deploy breaker', () => {
  const cap = (ms: number) => event('app:budget:cap', at(ms));
  const set = (ms: number, newAction: string) => event('app:budget:set', at(ms), { new_action: newAction });

  it('a cap with no budget set trips it', () => {
    const state = createRackState();
    const e = cap(0);
    expect(state.apply(e).transitions).toEqual([{ app: APP, lifecycle: 'breaker', from: 'closed', to: 'tripped', event: e, late: false }]);
    expect(state.app(APP)!.breaker).toEqual({ state: 'tripped', since: at(0), by: 'app:budget:cap' });
  });

  it('a cap when the budget was set to block-new-deploys trips it; a second cap keeps the first trip time', () => {
    const state = createRackState();
    state.apply(set(-HOUR, 'block-new-deploys'));
    state.apply(cap(0));
    expect(state.apply(cap(HOUR)).transitions).toEqual([]);
    expect(state.app(APP)!.breaker).toEqual({ state: 'tripped', since: at(0), by: 'app:budget:cap' });
  });

  it.each(['alert-only', 'auto-shutdown'])('a cap when the budget was set to %s leaves it closed', (newAction) => {
    const state = createRackState();
    state.apply(set(-HOUR, newAction));
    expect(state.apply(cap(0)).transitions).toEqual([]);
    expect(state.app(APP)!.breaker).toEqual({ state: 'closed' });
  });

  it.each(['app:budget:breaker-cleared', 'app:budget:reset', 'app:budget:clear'] as const)('%s closes a tripped breaker', (action) => {
    const state = createRackState();
    state.apply(cap(0));
    const e = event(action, at(HOUR));
    expect(state.apply(e).transitions).toEqual([{ app: APP, lifecycle: 'breaker', from: 'tripped', to: 'closed', event: e, late: false }]);
    expect(state.app(APP)!.breaker).toEqual({ state: 'closed', since: at(HOUR), by: action });
  });

  it.each(['app:budget:breaker-cleared', 'app:budget:reset', 'app:budget:clear'] as const)(
    '%s on a closed breaker changes nothing',
    (action) => {
      const state = createRackState();
      state.apply(event('app:budget:threshold', at(0)));
      expect(state.apply(event(action, at(HOUR))).transitions).toEqual([]);
      expect(state.app(APP)!.breaker).toEqual({ state: 'closed' });
    },
  );

  it('after a clear the budget names no at-cap action, so the next cap trips it again', () => {
    const state = createRackState();
    state.apply(set(-2 * HOUR, 'alert-only'));
    state.apply(event('app:budget:clear', at(-HOUR)));
    state.apply(cap(0));
    expect(state.app(APP)!.breaker).toEqual({ state: 'tripped', since: at(0), by: 'app:budget:cap' });
  });

  it('a late set (alert-only, before the cap) un-trips it and says so once', () => {
    const state = createRackState();
    state.apply(cap(0));
    const late = set(-HOUR, 'alert-only');
    expect(state.apply(late)).toEqual({
      applied: true,
      app: APP,
      late: true,
      transitions: [{ app: APP, lifecycle: 'breaker', from: 'tripped', to: 'closed', event: late, late: true }],
    });
    expect(state.app(APP)!.breaker).toEqual({ state: 'closed' });
  });

  it('set then breaker-cleared of one tick, arriving in either order, end closed', () => {
    for (const order of [0, 1]) {
      const state = createRackState();
      state.apply(cap(0));
      const pair = [set(HOUR, 'block-new-deploys'), event('app:budget:breaker-cleared', at(HOUR, 1))];
      for (const e of order === 0 ? pair : pair.reverse()) state.apply(e);
      expect(state.app(APP)!.breaker).toEqual({ state: 'closed', since: at(HOUR, 1), by: 'app:budget:breaker-cleared' });
    }
  });
});

describe('the budget as last set and the last crossings', () => {
  const set = (ms: number, data: Parameters<typeof event<'app:budget:set'>>[2] = {}) => event('app:budget:set', at(ms), data);

  it('set: cap, at-cap action, threshold, when and by whom (ack_by)', () => {
    const state = createRackState();
    state.apply(set(0));
    expect(state.app(APP)!.budget).toEqual({
      capUsd: '100.00',
      atCapAction: 'auto-shutdown',
      alertThresholdPercent: '90',
      setAt: at(0),
      setBy: 'ops@example.com',
    });
  });

  it('the set with the latest timestamp wins whatever the arrival order', () => {
    const state = createRackState();
    state.apply(
      set(HOUR, { new_cap_usd: '250.00', new_action: 'alert-only', new_pct: '75', ack_by: 'dana@example.com', actor: 'dana@example.com' }),
    );
    state.apply(set(0));
    expect(state.app(APP)!.budget).toEqual({
      capUsd: '250.00',
      atCapAction: 'alert-only',
      alertThresholdPercent: '75',
      setAt: at(HOUR),
      setBy: 'dana@example.com',
    });
  });

  it('threshold, cap and reset record their last crossing', () => {
    const state = createRackState();
    state.apply(set(0));
    for (const [action, ms] of [
      ['app:budget:threshold', MINUTE],
      ['app:budget:threshold', 2 * MINUTE],
      ['app:budget:cap', 3 * MINUTE],
      ['app:budget:reset', 4 * MINUTE],
    ] as const) {
      state.apply(event(action, at(ms)));
    }
    // A late threshold (older than the last one) does not move the last crossing back.
    state.apply(event('app:budget:threshold', at(MINUTE / 2)));
    expect(state.app(APP)!.budget).toEqual({
      capUsd: '100.00',
      atCapAction: 'auto-shutdown',
      alertThresholdPercent: '90',
      setAt: at(0),
      setBy: 'ops@example.com',
      lastThresholdAt: at(2 * MINUTE),
      lastCapAt: at(3 * MINUTE),
      lastResetAt: at(4 * MINUTE),
    });
  });

  it('clear removes the budget as set and keeps the crossings; a later set removes clearedAt', () => {
    const state = createRackState();
    state.apply(set(0));
    state.apply(event('app:budget:threshold', at(MINUTE)));
    state.apply(event('app:budget:cap', at(2 * MINUTE)));
    state.apply(event('app:budget:clear', at(3 * MINUTE)));
    expect(state.app(APP)!.budget).toEqual({ lastThresholdAt: at(MINUTE), lastCapAt: at(2 * MINUTE), clearedAt: at(3 * MINUTE) });
    state.apply(set(4 * MINUTE, { new_cap_usd: '50.00', new_action: 'block-new-deploys', new_pct: '80' }));
    expect(state.app(APP)!.budget).toEqual({
      capUsd: '50.00',
      atCapAction: 'block-new-deploys',
      alertThresholdPercent: '80',
      setAt: at(4 * MINUTE),
      setBy: 'ops@example.com',
      lastThresholdAt: at(MINUTE),
      lastCapAt: at(2 * MINUTE),
    });
  });
});

describe('scale and triggers overrides per service', () => {
  it('scale-override:toggled: the last state per service, with the actor from ack_by', () => {
    const state = createRackState();
    const toggle = (ms: number, service: string, on: 'on' | 'off', who = 'ops@example.com') =>
      event('app:scale-override:toggled', at(ms), { service, state: on, actor: who, ack_by: who });
    state.apply(toggle(0, 'web', 'on'));
    state.apply(toggle(MINUTE, 'worker', 'on', 'dana@example.com'));
    state.apply(toggle(2 * MINUTE, 'web', 'off'));
    // honored is a deploy-time note, not a toggle.
    state.apply(event('app:scale-override:honored', at(3 * MINUTE), { service: 'worker' }));
    expect(state.app(APP)!.scaleOverrides).toEqual({
      web: { state: 'off', at: at(2 * MINUTE), actor: 'ops@example.com' },
      worker: { state: 'on', at: at(MINUTE), actor: 'dana@example.com' },
    });
  });

  it('triggers-override: toggles and the last threshold per trigger type, per service', () => {
    const state = createRackState();
    const threshold = (ms: number, service: string, type: string, value: string) =>
      event('app:triggers-override:threshold-set', at(ms), { service, type, threshold: value });
    // A threshold before any toggle: no state known yet.
    state.apply(threshold(0, 'api', 'cpu', '70'));
    state.apply(event('app:triggers-override:toggled', at(MINUTE), { service: 'worker', state: 'on', crd: 'hpa' }));
    state.apply(threshold(2 * MINUTE, 'worker', 'cpu', '75'));
    state.apply(threshold(3 * MINUTE, 'worker', 'memory', '80'));
    state.apply(threshold(4 * MINUTE, 'worker', 'cpu', '60.5'));
    // Late: an older cpu threshold does not override the newer one.
    state.apply(threshold(2 * MINUTE + 1, 'worker', 'cpu', '90'));
    expect(state.app(APP)!.triggersOverrides).toEqual({
      api: { at: at(0), thresholds: { cpu: '70' } },
      worker: { state: 'on', crd: 'hpa', at: at(4 * MINUTE), thresholds: { cpu: '60.5', memory: '80' } },
    });
    state.apply(event('app:triggers-override:toggled', at(5 * MINUTE), { service: 'worker', state: 'off', crd: 'scaledobject' }));
    expect(state.app(APP)!.triggersOverrides['worker']).toEqual({
      state: 'off',
      crd: 'scaledobject',
      at: at(5 * MINUTE),
      thresholds: { cpu: '60.5', memory: '80' },
    });
  });
});

describe('promotes per release id', () => {
  const RELEASE = 'RKDVNPQHSTE';
  const start = (ms = 0) => event('release:promote', at(ms), { id: RELEASE, actor: 'dana@example.com' });
  const TERMINALS = [
    ['app:promote:completed', 'completed', undefined],
    ['app:promote:errored', 'errored', 'deployment "web" exceeded its progress deadline'],
    ['app:promote:cancelled', 'cancelled', 'superseded by promote of release RPZXCVBNMAS'],
  ] as const;
  const terminal = (action: (typeof TERMINALS)[number][0], ms: number, message?: string) =>
    event(action, at(ms), { id: RELEASE, actor: 'dana@example.com', ...(message === undefined ? {} : { message }) });

  it('the start: when and by whom', () => {
    const state = createRackState();
    state.apply(start());
    expect(state.app(APP)!.promotes).toEqual({ [RELEASE]: { releaseId: RELEASE, startedAt: at(0), actor: 'dana@example.com' } });
  });

  it.each(TERMINALS)('%s ends it as %s, with actor and message', (action, outcome, message) => {
    const state = createRackState();
    state.apply(start());
    state.apply(terminal(action, 2 * MINUTE, message));
    expect(state.app(APP)!.promotes[RELEASE]).toEqual({
      releaseId: RELEASE,
      startedAt: at(0),
      actor: 'dana@example.com',
      outcome,
      endedAt: at(2 * MINUTE),
      ...(message === undefined ? {} : { message }),
    });
  });

  it.each(TERMINALS)('after %s a second, later terminal does not change the outcome', (action, outcome, message) => {
    const state = createRackState();
    state.apply(start());
    state.apply(terminal(action, 2 * MINUTE, message));
    const other = TERMINALS.find(([a]) => a !== action)!;
    state.apply(terminal(other[0], 3 * MINUTE, other[2]));
    expect(state.app(APP)!.promotes[RELEASE]).toMatchObject({ outcome, endedAt: at(2 * MINUTE) });
    expect(state.app(APP)!.promotes[RELEASE]!.message).toBe(message);
  });

  it('the earliest terminal by timestamp is the outcome even when it arrives second', () => {
    const state = createRackState();
    state.apply(start());
    state.apply(terminal('app:promote:completed', 3 * MINUTE));
    state.apply(terminal('app:promote:errored', 2 * MINUTE, 'rollout failed'));
    expect(state.app(APP)!.promotes[RELEASE]).toMatchObject({ outcome: 'errored', endedAt: at(2 * MINUTE), message: 'rollout failed' });
  });

  it('a terminal without its start still records the outcome, with the actor it carries', () => {
    const state = createRackState();
    state.apply(event('app:promote:cancelled', at(MINUTE), { id: RELEASE, actor: 'ops@example.com', message: 'superseded' }));
    expect(state.app(APP)!.promotes).toEqual({
      [RELEASE]: { releaseId: RELEASE, outcome: 'cancelled', endedAt: at(MINUTE), actor: 'ops@example.com', message: 'superseded' },
    });
  });

  it('promotes of different releases are kept apart', () => {
    const state = createRackState();
    state.apply(start());
    state.apply(event('release:promote', at(MINUTE), { id: 'RPZXCVBNMAS', actor: 'ops@example.com' }));
    state.apply(terminal('app:promote:completed', 2 * MINUTE));
    expect(Object.keys(state.app(APP)!.promotes).sort()).toEqual(['RKDVNPQHSTE', 'RPZXCVBNMAS']);
    expect(state.app(APP)!.promotes['RPZXCVBNMAS']).toEqual({ releaseId: 'RPZXCVBNMAS', startedAt: at(MINUTE), actor: 'ops@example.com' });
  });
});

describe('the last build and release', () => {
  it('build:create success, then error with its message', () => {
    const state = createRackState();
    state.apply(event('build:create', at(0), { id: 'BQXJLMZTWRA' }, 'success'));
    expect(state.app(APP)!.lastBuild).toEqual({ id: 'BQXJLMZTWRA', action: 'build:create', status: 'success', at: at(0) });
    state.apply(event('build:create', at(MINUTE), { id: 'BQXJLMZTWRA', message: 'exit status 1' }, 'error'));
    expect(state.app(APP)!.lastBuild).toEqual({
      id: 'BQXJLMZTWRA',
      action: 'build:create',
      status: 'error',
      at: at(MINUTE),
      message: 'exit status 1',
    });
  });

  it('import-image start and done name the build from data.build', () => {
    const state = createRackState();
    state.apply(event('build:import-image:start', at(0), { build: 'BFHRWNCYTQE' }));
    expect(state.app(APP)!.lastBuild).toEqual({ id: 'BFHRWNCYTQE', action: 'build:import-image:start', status: 'success', at: at(0) });
    state.apply(event('build:import-image:done', at(MINUTE), { build: 'BFHRWNCYTQE' }));
    expect(state.app(APP)!.lastBuild).toEqual({ id: 'BFHRWNCYTQE', action: 'build:import-image:done', status: 'success', at: at(MINUTE) });
  });

  it('build:cancel is the last build; an older build event arriving late is not', () => {
    const state = createRackState();
    state.apply(event('build:cancel', at(MINUTE), { id: 'BMWQZTRPLKD' }));
    state.apply(event('build:create', at(0), { id: 'BMWQZTRPLKD' }));
    expect(state.app(APP)!.lastBuild).toEqual({ id: 'BMWQZTRPLKD', action: 'build:cancel', status: 'success', at: at(MINUTE) });
  });

  it('release:create sets the last release; release:promote does not', () => {
    const state = createRackState();
    state.apply(event('release:create', at(0), { id: 'RKDVNPQHSTE' }));
    state.apply(event('release:promote', at(MINUTE), { id: 'RNEWERRELEASE' }));
    expect(state.app(APP)!.lastRelease).toEqual({ id: 'RKDVNPQHSTE', at: at(0) });
    state.apply(event('release:create', at(2 * MINUTE), { id: 'RNEWERRELEASE' }));
    expect(state.app(APP)!.lastRelease).toEqual({ id: 'RNEWERRELEASE', at: at(2 * MINUTE) });
  });
});

describe('onTransition', () => {
  it('a listener that throws does not keep the others or apply from their work; unsubscribe stops it', () => {
    const state = createRackState();
    const heard: string[] = [];
    state.onTransition(() => {
      throw new Error('listener bug');
    });
    const unsubscribe = state.onTransition(({ from, to }) => heard.push(`${from}->${to}`));
    expect(state.apply(shutdown('armed', at(0), TICK)).applied).toBe(true);
    expect(heard).toEqual(['idle->armed']);
    unsubscribe();
    state.apply(shutdown('fired', at(HOUR), TICK));
    expect(heard).toEqual(['idle->armed']);
    expect(state.app(APP)!.autoShutdown.phase).toBe('shut-down');
  });
});

describe('a whole app', () => {
  it('app:create names the app by data.name, and a fresh app is idle, closed and empty', () => {
    const state = createRackState();
    const created = createTestAppCreate();
    expect(state.apply(created)).toEqual({ applied: true, app: 'reports-worker', late: false, transitions: [] });
    expect(state.app('reports-worker')).toEqual(freshApp('reports-worker', created.timestamp));
    expect(state.app(APP)).toBeUndefined();
  });
});

function createTestAppCreate(): AnyWebhookEvent {
  return {
    action: 'app:create',
    status: 'success',
    timestamp: '2026-04-20T09:12:44Z',
    data: { name: 'reports-worker', rack: 'example-rack', actor: 'ops@example.com' },
  };
}
