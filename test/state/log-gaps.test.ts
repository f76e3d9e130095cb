import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnyWebhookEvent } from '../../src/index.js';
import { findLogGaps, type LogGapOptions, type LoggedEvent } from '../../src/state/log-gaps.js';
import { at, MINUTE, tickId } from './events.js';

/**
 * rack-api.md section 4 as pure rules over a log (issue 39 point 3): the gaps depend only on the set
 * of deliveries, a complete history has none, each lost event is one gap once its evidence waited
 * its bound, and what the spec lets the rack leave unsent raises nothing.
 */

const T0 = Date.parse(at(0));
const GRACE = 10 * MINUTE;
const PROMOTE = 120 * MINUTE;
const SHUTDOWN = 'app:budget:auto-shutdown:';

function ev(action: string, ms: number, data: Record<string, string>, status = 'success'): AnyWebhookEvent {
  return { action, status, timestamp: at(ms), data: { rack: 'r', actor: 'system', ...data } };
}

let nextId = 1;
const logged = (event: AnyWebhookEvent, delayMs = 50): LoggedEvent => ({
  event,
  deliveryId: String(nextId++),
  receivedAtMs: Date.parse(event.timestamp) + delayMs,
});

/** Long after everything: every bound has passed. */
const options = (nowMs = T0 + 10 * PROMOTE, horizonMs = T0 - 10 * PROMOTE): LogGapOptions => ({
  nowMs,
  horizonMs,
  graceMs: GRACE,
  promoteOutcomeMs: PROMOTE,
});
const keys = (events: readonly LoggedEvent[], given = options()) => findLogGaps(events, given).map((gap) => gap.key);

/** One flow of rack-api.md 3.3, as sent, with the gap each event's loss must raise (undefined: nothing implies it). */
interface Sent {
  readonly event: AnyWebhookEvent;
  readonly lostGap: string | undefined;
}

function sourceBuild(app: string, n: number, t: number): Sent[] {
  const release = `RREL${n}`;
  return [
    { event: ev('release:create', t, { app, id: release }), lostGap: `${app}:release:create:${release}` },
    { event: ev('build:create', t + 1, { app, id: `BBLD${n}`, release_id: release }), lostGap: undefined },
  ];
}

function promote(app: string, n: number, t: number, outcome: string, repeated: boolean, twice: boolean): Sent[] {
  const id = `RPRO${n}`;
  const sent: Sent[] = [
    { event: ev('release:promote', t, { app, id }, 'start'), lostGap: repeated ? undefined : `${app}:release:promote:${id}` },
    {
      event: ev(`app:promote:${outcome}`, t + 5 * MINUTE, { app, id }),
      lostGap: twice ? undefined : `${app}:app:promote:completed|errored|cancelled:${id}`,
    },
  ];
  // A parameter update sends the start again; an expired watch can send the outcome twice.
  if (repeated) sent.push({ event: ev('release:promote', t + 6 * MINUTE, { app, id }, 'start'), lostGap: undefined });
  if (twice) sent.push({ event: ev(`app:promote:${outcome}`, t + 9 * MINUTE, { app, id }), lostGap: undefined });
  return sent;
}

function appCreation(app: string, t: number): Sent[] {
  return [
    // Lost, both app:create and the outcome say so: one gap.
    { event: ev('release:promote', t, { app, id: '' }, 'start'), lostGap: `${app}:release:promote:` },
    { event: ev('app:create', t + 1, { name: app }), lostGap: undefined },
    { event: ev('app:promote:completed', t + 2 * MINUTE, { app, id: '' }), lostGap: `${app}:app:promote:completed|errored|cancelled:` },
  ];
}

function shutdown(
  app: string,
  n: number,
  t: number,
  end: 'fired' | 'failed' | 'cancelled',
  after: 'restored' | 'expired' | 'none',
): Sent[] {
  const tick = tickId(n, t);
  const armedGap = `${app}:${SHUTDOWN}armed:${tick}`;
  const ended = end !== 'cancelled' && after !== 'none';
  const sent: Sent[] = [
    { event: ev(`${SHUTDOWN}armed`, t + 1, { app, tick_id: tick }), lostGap: armedGap },
    {
      event: ev(`${SHUTDOWN}${end}`, t + 30 * MINUTE, { app, tick_id: tick }),
      lostGap: ended ? `${app}:${SHUTDOWN}fired|failed:${tick}` : undefined,
    },
  ];
  if (ended && after === 'restored')
    sent.push({
      event: ev(`${SHUTDOWN}restored`, t + 90 * MINUTE, { app, tick_id: tick, recovery_trigger: 'manual-detected' }),
      lostGap: undefined,
    });
  if (ended && after === 'expired')
    sent.push({ event: ev(`${SHUTDOWN}expired`, t + 95 * MINUTE, { app, tick_id: tick }), lostGap: undefined });
  return sent;
}

/** What the rack sends and no rule may read as a gap (rack-api.md 3.2, 3.4, field notes). */
function noise(app: string, n: number, t: number): Sent[] {
  const none = (event: AnyWebhookEvent): Sent => ({ event, lostGap: undefined });
  return [
    none(ev('release:create', t, { app, id: `RARC${n}` })), // archive import: no build:create
    none(ev('build:import-image:start', t, { app, build: `BIMG${n}`, image: 'x' })),
    none(ev('build:import-image:done', t + 1, { app, build: `BIMG${n}`, status: 'complete' })),
    none(ev('build:create', t + 2, { app, id: `BERR${n}`, message: 'failed' }, 'error')),
    none(ev(`${SHUTDOWN}failed`, t + 3, { app, tick_id: tickId(1000 + n, t), failure_reason: 'state-corrupt' })),
    none(ev(`${SHUTDOWN}simulated`, t + 4, { app, tick_id: tickId(2000 + n, t), dry_run: 'true' })),
    none(ev(`${SHUTDOWN}noop`, t + 5, { app, tick_id: tickId(3000 + n, t) })),
    // A budget reset's restore, by a user: rule 4 does not say it needs a :fired or :failed.
    {
      event: ev(`${SHUTDOWN}armed`, t + 6, { app, tick_id: tickId(4000 + n, t) }),
      lostGap: `${app}:${SHUTDOWN}armed:${tickId(4000 + n, t)}`,
    },
    none(ev(`${SHUTDOWN}restored`, t + 7, { app, tick_id: tickId(4000 + n, t), recovery_trigger: 'reset', actor: 'ops@example.com' })),
    {
      event: ev(`${SHUTDOWN}armed`, t + 6, { app, tick_id: tickId(5000 + n, t) }),
      lostGap: `${app}:${SHUTDOWN}armed:${tickId(5000 + n, t)}`,
    },
    none(
      ev(`${SHUTDOWN}restored`, t + 7, {
        app,
        tick_id: tickId(5000 + n, t),
        recovery_trigger: 'manual-detected',
        actor: 'ops@example.com',
      }),
    ),
    none(ev('rack:update', t + 8, { name: 'r', version: '3.25.0' })),
  ];
}

const APPS = ['billing-api', 'checkout-web'] as const;
const flow = fc.oneof(
  fc.record({ kind: fc.constant('build' as const), app: fc.constantFrom(...APPS), minute: fc.nat(600) }),
  fc.record({
    kind: fc.constant('promote' as const),
    app: fc.constantFrom(...APPS),
    minute: fc.nat(600),
    outcome: fc.constantFrom('completed', 'errored', 'cancelled'),
    repeated: fc.boolean(),
    twice: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('create' as const), app: fc.constantFrom('new-api', 'new-web'), minute: fc.nat(600) }),
  fc.record({
    kind: fc.constant('shutdown' as const),
    app: fc.constantFrom(...APPS),
    minute: fc.nat(600),
    end: fc.constantFrom('fired' as const, 'failed' as const, 'cancelled' as const),
    after: fc.constantFrom('restored' as const, 'expired' as const, 'none' as const),
  }),
  fc.record({ kind: fc.constant('noise' as const), app: fc.constantFrom(...APPS), minute: fc.nat(600) }),
);
type Flow = typeof flow extends fc.Arbitrary<infer F> ? F : never;

/** Flows with distinct ids (each flow's own number), in the order the rack sent them. */
function history(flows: readonly Flow[]): Sent[] {
  const seenCreates = new Set<string>();
  return flows.flatMap((f, n) => {
    const t = f.minute * MINUTE;
    switch (f.kind) {
      case 'build':
        return sourceBuild(f.app, n, t);
      case 'promote':
        return promote(f.app, n, t, f.outcome, f.repeated, f.twice);
      case 'create':
        // An app is created once.
        if (seenCreates.has(f.app)) return [];
        seenCreates.add(f.app);
        return appCreation(f.app, t);
      case 'shutdown':
        return shutdown(f.app, n, t, f.end, f.after);
      case 'noise':
        return noise(f.app, n, t);
    }
  });
}

/** The log as stored: in any order (`seed` sorts it), some deliveries stored twice (other bytes, another row). */
function stored(sent: readonly Sent[], seed: readonly number[], copies: readonly number[]): LoggedEvent[] {
  const rows = sent.map((s) => logged(s.event));
  const copied = copies.filter((i) => i < rows.length).map((i) => ({ ...rows[i]!, deliveryId: `${rows[i]!.deliveryId}0` }));
  return [...rows, ...copied]
    .map((row, i) => ({ row, key: seed[i] ?? i }))
    .sort((a, b) => a.key - b.key)
    .map(({ row }) => row);
}

describe('findLogGaps: rack-api.md section 4 on the log alone', () => {
  it('rule 1: a successful build:create whose release:create never arrived', () => {
    const [release, build] = sourceBuild('billing-api', 7, 0).map((s) => logged(s.event));
    expect(keys([release!, build!])).toEqual([]);
    const [gap] = findLogGaps([build!], options());
    expect(gap).toEqual({
      key: 'billing-api:release:create:RREL7',
      rules: ['build_without_release'],
      app: 'billing-api',
      id: 'RREL7',
      missing: 'release:create',
      evidence: [{ deliveryId: build!.deliveryId, action: 'build:create', eventTime: at(1), receivedAt: new Date(T0 + 51).toISOString() }],
      sinceMs: T0 + 1,
      boundMs: GRACE,
    });
    // Ids match case-insensitively, as the rack matches them.
    const lower = logged(ev('release:create', 0, { app: 'billing-api', id: 'rrel7' }));
    expect(keys([build!, lower])).toEqual([]);
  });

  it('waits out the bound from the later of the event time and the arrival: only late is no gap', () => {
    const build = logged(ev('build:create', 0, { app: 'a', id: 'B1', release_id: 'R1' }), 3 * MINUTE);
    expect(keys([build], options(T0 + 3 * MINUTE + GRACE - 1))).toEqual([]);
    expect(keys([build], options(T0 + 3 * MINUTE + GRACE))).toEqual(['a:release:create:R1']);
    const start = logged(ev('release:promote', 0, { app: 'a', id: 'R1' }, 'start'));
    expect(keys([start], options(T0 + 50 + PROMOTE - 1))).toEqual([]);
    expect(findLogGaps([start], options(T0 + 50 + PROMOTE))).toMatchObject([
      { key: 'a:app:promote:completed|errored|cancelled:R1', rules: ['promote_without_outcome'], boundMs: PROMOTE },
    ]);
  });

  it('judges nothing whose partner may sit before the horizon of what was read', () => {
    const build = logged(ev('build:create', 0, { app: 'a', id: 'B1', release_id: 'R1' }));
    expect(keys([build], options(undefined, T0 - GRACE))).toEqual(['a:release:create:R1']);
    expect(keys([build], options(undefined, T0 - GRACE + 1))).toEqual([]);
    const outcome = logged(ev('app:promote:completed', 0, { app: 'a', id: 'R1' }));
    expect(keys([outcome], options(undefined, T0 - PROMOTE))).toEqual(['a:release:promote:R1']);
    expect(keys([outcome], options(undefined, T0 - PROMOTE + 1))).toEqual([]);
    // A countdown is judged from its tick's time, which its :armed cannot precede.
    const fired = logged(ev(`${SHUTDOWN}fired`, 3 * PROMOTE, { app: 'a', tick_id: tickId(1, 0) }));
    expect(keys([fired], options(undefined, T0 - GRACE))).toEqual([`a:${SHUTDOWN}armed:${tickId(1, 0)}`]);
    expect(keys([fired], options(undefined, T0 - GRACE + 1))).toEqual([]);
    // A tick_id of another shape cannot be placed in time: never judged.
    expect(keys([logged(ev(`${SHUTDOWN}fired`, 0, { app: 'a', tick_id: 'tick-7' }))])).toEqual([]);
  });

  it('one gap per missing event, whichever rules point at it, with every delivery that implies it', () => {
    const [, create, outcome] = appCreation('new-api', 0).map((s) => logged(s.event));
    const gaps = findLogGaps([outcome!, create!], options());
    expect(gaps).toMatchObject([
      {
        key: 'new-api:release:promote:',
        rules: ['app_create_without_promote', 'outcome_without_promote'],
        id: '',
        evidence: [{ deliveryId: create!.deliveryId }, { deliveryId: outcome!.deliveryId }],
      },
    ]);
  });

  it('complete histories have no gap, in any order and with copies', () => {
    fc.assert(
      fc.property(
        fc.array(flow, { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 60 }),
        fc.array(fc.nat(60), { maxLength: 5 }),
        (flows, order, copies) => {
          expect(keys(stored(history(flows), order, copies))).toEqual([]);
        },
      ),
    );
  });

  it('losing one event raises exactly the gap it leaves, the same in any order, with copies; it arriving late resolves it', () => {
    fc.assert(
      fc.property(
        fc.array(flow, { minLength: 1, maxLength: 12 }),
        fc.nat(),
        fc.array(fc.nat(), { maxLength: 60 }),
        fc.array(fc.nat(60), { maxLength: 5 }),
        (flows, pick, order, copies) => {
          const sent = history(flows);
          fc.pre(sent.length > 0);
          const lost = pick % sent.length;
          const kept = sent.filter((_, i) => i !== lost);
          const expected = sent[lost]!.lostGap === undefined ? [] : [sent[lost]!.lostGap];
          const rows = stored(kept, order, copies);
          expect(keys(rows)).toEqual(expected);
          expect(findLogGaps([...rows].reverse(), options())).toEqual(findLogGaps(rows, options()));
          expect(keys([...rows, logged(sent[lost]!.event, 10 * PROMOTE)])).toEqual([]);
        },
      ),
    );
  });
});
