import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareEvents,
  createRackState,
  type AnyWebhookEvent,
  type ApplyResult,
  type PhaseTransition,
  type RackState,
} from '../../src/index.js';
import { CANCEL_REASONS, MINUTE, at, event, shutdown, tickId, type CancelReason, type ShutdownKind } from './events.js';

/**
 * The ordering guarantee: the state and the anomalies depend only on the set of events applied.
 * Random histories over three apps, with timestamps drawn from a few minutes, milliseconds and
 * nanoseconds so that events equal to the millisecond, differing only in the nanoseconds, and
 * exactly tied (same timestamp, different action) are common.
 */

const APPS = ['billing-api', 'checkout-web', 'data-pipeline'] as const;
const REASONS = Object.keys(CANCEL_REASONS) as CancelReason[];
const NS_PER_MS = 1_000_000;

// Event time in nanoseconds after T0 (a number: 40 minutes is far below 2^53 ns).
const time = fc
  .record({ minute: fc.integer({ min: 0, max: 40 }), ms: fc.constantFrom(0, 1, 500), ns: fc.constantFrom(0, 1, 2, 999_999) })
  .map(({ minute, ms, ns }) => (minute * MINUTE + ms) * NS_PER_MS + ns);
// Between two events of one sequence: an exact tie, a nanosecond, a microsecond, a millisecond, minutes.
const delta = fc.constantFrom(0, 1, 1000, NS_PER_MS, MINUTE * NS_PER_MS, 10 * MINUTE * NS_PER_MS);
const stamp = (ns: number) => at(Math.floor(ns / NS_PER_MS), ns % NS_PER_MS);
const app = fc.constantFrom(...APPS);

/** A whole auto-shutdown sequence sharing one tick_id; each event is sometimes lost. */
const shutdownSequence = fc.record({
  family: fc.constant('shutdown' as const),
  app,
  start: time,
  deltas: fc.array(delta, { minLength: 7, maxLength: 7 }),
  end: fc.constantFrom('fired', 'failed', 'cancelled', 'none'),
  reason: fc.constantFrom(...REASONS),
  restored: fc.boolean(),
  dismissed: fc.boolean(),
  extras: fc.subarray(['flap-suppressed', 'noop', 'expired'] as const),
  lost: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 7, maxLength: 7 }),
});

/** A promote of one of two release ids: a start or not, and zero, one or two terminals. */
const promoteSequence = fc.record({
  family: fc.constant('promote' as const),
  app,
  release: fc.constantFrom('RKDVNPQHSTE', 'RPZXCVBNMAS'),
  start: time,
  deltas: fc.array(delta, { minLength: 3, maxLength: 3 }),
  started: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
  terminals: fc.array(fc.constantFrom('completed', 'errored', 'cancelled'), { maxLength: 2 }),
});

const budgetEvent = fc.record({
  family: fc.constant('budget' as const),
  app,
  t: time,
  kind: fc.constantFrom('set', 'cap', 'threshold', 'reset', 'clear', 'breaker-cleared'),
  newAction: fc.constantFrom('block-new-deploys', 'alert-only', 'auto-shutdown'),
  cap: fc.constantFrom('100.00', '150.00'),
});

const overrideEvent = fc.record({
  family: fc.constant('override' as const),
  app,
  t: time,
  kind: fc.constantFrom('scale', 'triggers', 'threshold'),
  service: fc.constantFrom('web', 'worker'),
  on: fc.constantFrom('on', 'off'),
  type: fc.constantFrom('cpu', 'memory'),
  threshold: fc.constantFrom('50', '75.5'),
});

const buildEvent = fc.record({
  family: fc.constant('build' as const),
  app,
  t: time,
  kind: fc.constantFrom('build-success', 'build-error', 'cancel', 'release'),
  id: fc.constantFrom('BQXJLMZTWRA', 'BMWQZTRPLKD'),
});

type Piece = typeof shutdownSequence | typeof promoteSequence | typeof budgetEvent | typeof overrideEvent | typeof buildEvent;
type PieceValue = Piece extends fc.Arbitrary<infer V> ? V : never;

function eventsOf(piece: PieceValue, index: number): AnyWebhookEvent[] {
  switch (piece.family) {
    case 'shutdown': {
      const tick = tickId(index, Math.floor(piece.start / NS_PER_MS));
      const kinds: { kind: ShutdownKind; data?: Record<string, string> }[] = [{ kind: 'armed' }];
      if (piece.end === 'cancelled')
        kinds.push({ kind: 'cancelled', data: { cancel_reason: piece.reason, actor: CANCEL_REASONS[piece.reason] } });
      else if (piece.end !== 'none') kinds.push({ kind: piece.end as ShutdownKind });
      if (piece.restored) kinds.push({ kind: 'restored', data: { actor: 'ops@example.com' } });
      if (piece.dismissed) kinds.push({ kind: 'dismissed', data: { actor: 'ops@example.com' } });
      for (const kind of piece.extras) kinds.push({ kind });
      let t = piece.start;
      return kinds.flatMap(({ kind, data }, i) => {
        t += piece.deltas[i] ?? 0;
        return piece.lost[i] === 0 ? [] : [shutdown(kind, stamp(t), tick, { app: piece.app, ...data })];
      });
    }
    case 'promote': {
      const data = { app: piece.app, id: piece.release, actor: 'dana@example.com' };
      let t = piece.start;
      const events: AnyWebhookEvent[] = piece.started ? [event('release:promote', stamp(t), data)] : [];
      piece.terminals.forEach((outcome, i) => {
        t += piece.deltas[i] ?? 0;
        const message = outcome === 'completed' ? {} : { message: `${outcome} at step ${i}` };
        events.push(event(`app:promote:${outcome}`, stamp(t), { ...data, ...message }));
      });
      return events;
    }
    case 'budget': {
      const timestamp = stamp(piece.t);
      if (piece.kind === 'set')
        return [event('app:budget:set', timestamp, { app: piece.app, new_action: piece.newAction, new_cap_usd: piece.cap })];
      return [event(`app:budget:${piece.kind}`, timestamp, { app: piece.app })];
    }
    case 'override': {
      const timestamp = stamp(piece.t);
      const common = { app: piece.app, service: piece.service };
      if (piece.kind === 'scale') return [event('app:scale-override:toggled', timestamp, { ...common, state: piece.on })];
      if (piece.kind === 'triggers') return [event('app:triggers-override:toggled', timestamp, { ...common, state: piece.on, crd: 'hpa' })];
      return [event('app:triggers-override:threshold-set', timestamp, { ...common, type: piece.type, threshold: piece.threshold })];
    }
    case 'build': {
      const timestamp = stamp(piece.t);
      if (piece.kind === 'build-success') return [event('build:create', timestamp, { app: piece.app, id: piece.id }, 'success')];
      if (piece.kind === 'build-error')
        return [event('build:create', timestamp, { app: piece.app, id: piece.id, message: 'exit status 1' }, 'error')];
      if (piece.kind === 'cancel') return [event('build:cancel', timestamp, { app: piece.app, id: piece.id })];
      return [event('release:create', timestamp, { app: piece.app, id: `R${piece.id.slice(1)}` })];
    }
  }
}

const history = fc
  .array(
    fc.oneof(
      { arbitrary: shutdownSequence, weight: 3 },
      { arbitrary: promoteSequence, weight: 2 },
      { arbitrary: budgetEvent, weight: 3 },
      { arbitrary: overrideEvent, weight: 2 },
      { arbitrary: buildEvent, weight: 1 },
    ),
    {
      minLength: 1,
      maxLength: 12,
    },
  )
  .map((pieces) => pieces.flatMap((piece, index) => eventsOf(piece, index)));

/** The history and an arrival order: each event 1 to `maxCopies` times (copies are separate objects, as re-parsed deliveries are), shuffled. */
function arrival(maxCopies: number) {
  return history.chain((events) =>
    fc.array(fc.integer({ min: 1, max: maxCopies }), { minLength: events.length, maxLength: events.length }).chain((counts) => {
      const copies = events.flatMap((e, i) => Array.from({ length: counts[i]! }, (_, copy) => (copy === 0 ? e : structuredClone(e))));
      return fc.shuffledSubarray(copies, { minLength: copies.length, maxLength: copies.length }).map((order) => ({ events, order }));
    }),
  );
}

function applyAll(events: readonly AnyWebhookEvent[]): RackState {
  const state = createRackState();
  for (const e of events) state.apply(e);
  return state;
}

/** The reference: every event applied once, in the order of their own timestamps. */
function inOrder(events: readonly AnyWebhookEvent[]): RackState {
  return applyAll([...events].sort(compareEvents));
}

function expectSame(actual: RackState, expected: RackState) {
  expect(actual.apps()).toEqual(expected.apps());
  expect(actual.anomalies()).toEqual(expected.anomalies());
}

const appOf = (e: AnyWebhookEvent) => (e.data as Record<string, string>)['app'];

describe('rack state is a function of the set of events applied', () => {
  it('(a) any permutation gives the state and anomalies of the timestamp order', () => {
    fc.assert(
      fc.property(arrival(1), ({ events, order }) => {
        expectSame(applyAll(order), inOrder(events));
      }),
      { numRuns: 250 },
    );
  });

  it('(b) duplicates (each event 1 to 3 times, interleaved) change nothing', () => {
    fc.assert(
      fc.property(arrival(3), ({ events, order }) => {
        const state = createRackState();
        for (const e of order) {
          const before = { apps: state.apps(), anomalies: state.anomalies() };
          const result = state.apply(e);
          if (!result.applied) {
            expect(result).toEqual({ applied: false, app: appOf(e), reason: 'duplicate', late: false, transitions: [] });
            expect({ apps: state.apps(), anomalies: state.anomalies() }).toEqual(before);
          }
        }
        expectSame(state, inOrder(events));
      }),
      { numRuns: 150 },
    );
  });

  it('(c) the transition listener: one notification per change, chained, ending at the final state; duplicates tell nothing', () => {
    const initial = { 'auto-shutdown': 'idle', breaker: 'closed' } as const;
    fc.assert(
      fc.property(arrival(2), ({ events, order }) => {
        const state = createRackState();
        const told: PhaseTransition[] = [];
        state.onTransition((transition) => told.push(transition));
        const current = new Map<string, string>();
        const applied: AnyWebhookEvent[] = [];
        for (const e of order) {
          const from = told.length;
          const result: ApplyResult = state.apply(e);
          const now = told.slice(from);
          // The listener hears exactly what apply returns.
          expect(now).toEqual(result.transitions);
          const seenBefore = applied.some((other) => appOf(other) === appOf(e) && compareEvents(other, e) === 0);
          expect(result.applied).toBe(!seenBefore);
          if (!result.applied) {
            expect(result.reason).toBe('duplicate');
            expect(now).toEqual([]);
            continue;
          }
          // Late means: sorts before an event already applied for the same app.
          expect(result.late).toBe(applied.some((other) => appOf(other) === appOf(e) && compareEvents(e, other) < 0));
          applied.push(e);
          for (const transition of now) {
            expect(transition.app).toBe(appOf(e));
            expect(transition.event).toBe(e);
            expect(transition.late).toBe(result.late);
            expect(transition.from).not.toBe(transition.to);
            const key = `${transition.app}\u0000${transition.lifecycle}`;
            expect(transition.from).toBe(current.get(key) ?? initial[transition.lifecycle]);
            current.set(key, transition.to);
          }
        }
        for (const { app: name, autoShutdown, breaker } of state.apps()) {
          expect(current.get(`${name}\u0000auto-shutdown`) ?? 'idle').toBe(autoShutdown.phase);
          expect(current.get(`${name}\u0000breaker`) ?? 'closed').toBe(breaker.state);
        }
        expect(applied).toHaveLength(new Set(applied).size);
        expectSame(state, inOrder(events));
      }),
      { numRuns: 150 },
    );
  });
});
