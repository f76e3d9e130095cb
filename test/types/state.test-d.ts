import { describe, expectTypeOf, it } from 'vitest';
import {
  createRackState,
  createReceiver,
  type Anomaly,
  type AnomalyKind,
  type AnyWebhookEvent,
  type ApplyResult,
  type AppState,
  type AutoShutdownPhase,
  type AutoShutdownState,
  type BreakerState,
  type BudgetState,
  type BuildState,
  type PhaseEnd,
  type PhaseTransition,
  type PromoteOutcome,
  type PromoteState,
  type RackState,
  type ReleaseState,
  type ScaleOverride,
  type TriggersOverride,
} from '../../src/index.js';
import { createTestEvent } from '../../src/testing/index.js';

describe('rack state types', () => {
  it('createRackState takes optional windowMs / gracePeriodMs and returns a RackState', () => {
    expectTypeOf(createRackState).parameters.toEqualTypeOf<[options?: { windowMs?: number; gracePeriodMs?: number }]>();
    expectTypeOf(createRackState()).toEqualTypeOf<RackState>();
    expectTypeOf(createRackState({ windowMs: 86_400_000, gracePeriodMs: 0 })).toEqualTypeOf<RackState>();
    // @ts-expect-error windowMs is a number of milliseconds
    createRackState({ windowMs: '24h' });
    // @ts-expect-error no such option
    createRackState({ window: 1 });
  });

  it('apply takes any event (known, unknown, a test event) and returns an ApplyResult', () => {
    const state = createRackState();
    expectTypeOf(state.apply).parameter(0).toEqualTypeOf<AnyWebhookEvent>();
    expectTypeOf(state.apply(createTestEvent('app:budget:auto-shutdown:armed'))).toEqualTypeOf<ApplyResult>();
    expectTypeOf(state.apply({ action: 'app:budget:forecast', status: 'success', timestamp: '', data: {} })).toEqualTypeOf<ApplyResult>();
    // @ts-expect-error an event has data
    state.apply({ action: 'app:budget:cap', status: 'success', timestamp: '' });
  });

  it('ApplyResult: applied, the reason union exactly, late, transitions', () => {
    expectTypeOf<ApplyResult['applied']>().toEqualTypeOf<boolean>();
    expectTypeOf<ApplyResult['app']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<NonNullable<ApplyResult['reason']>>().toEqualTypeOf<'duplicate' | 'no_app' | 'invalid_timestamp' | 'outside_window'>();
    expectTypeOf<ApplyResult['late']>().toEqualTypeOf<boolean>();
    expectTypeOf<ApplyResult['transitions']>().toEqualTypeOf<readonly PhaseTransition[]>();
  });

  it('the queries', () => {
    const state = createRackState();
    expectTypeOf(state.app('billing-api')).toEqualTypeOf<AppState | undefined>();
    expectTypeOf(state.apps()).toEqualTypeOf<readonly AppState[]>();
    expectTypeOf(state.anomalies()).toEqualTypeOf<readonly Anomaly[]>();
  });

  it('onTransition takes a listener of PhaseTransition and returns the unsubscribe () => void', () => {
    const state = createRackState();
    const unsubscribe = state.onTransition((transition) => {
      expectTypeOf(transition).toEqualTypeOf<PhaseTransition>();
    });
    expectTypeOf(unsubscribe).toEqualTypeOf<() => void>();
    expectTypeOf<PhaseTransition['lifecycle']>().toEqualTypeOf<'auto-shutdown' | 'breaker'>();
    expectTypeOf<PhaseTransition['event']>().toEqualTypeOf<AnyWebhookEvent>();
    expectTypeOf<PhaseTransition['late']>().toEqualTypeOf<boolean>();
  });

  it('AutoShutdownPhase is exactly the five phases', () => {
    expectTypeOf<AutoShutdownPhase>().toEqualTypeOf<'idle' | 'armed' | 'shut-down' | 'shutdown-failed' | 'restored'>();
    expectTypeOf<AutoShutdownState['phase']>().toEqualTypeOf<AutoShutdownPhase>();
    expectTypeOf<PhaseEnd['phase']>().toEqualTypeOf<AutoShutdownPhase>();
    // @ts-expect-error not a phase
    const phase: AutoShutdownPhase = 'fired';
    void phase;
  });

  it('AppState fields are typed', () => {
    expectTypeOf<AppState['app']>().toEqualTypeOf<string>();
    expectTypeOf<AppState['autoShutdown']>().toEqualTypeOf<AutoShutdownState>();
    expectTypeOf<AppState['breaker']>().toEqualTypeOf<BreakerState>();
    expectTypeOf<BreakerState['state']>().toEqualTypeOf<'closed' | 'tripped'>();
    expectTypeOf<AppState['budget']>().toEqualTypeOf<BudgetState>();
    expectTypeOf<BudgetState['capUsd']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<AppState['scaleOverrides']>().toEqualTypeOf<Readonly<Record<string, ScaleOverride>>>();
    expectTypeOf<AppState['triggersOverrides']>().toEqualTypeOf<Readonly<Record<string, TriggersOverride>>>();
    expectTypeOf<TriggersOverride['thresholds']>().toEqualTypeOf<Readonly<Record<string, string>>>();
    expectTypeOf<AppState['promotes']>().toEqualTypeOf<Readonly<Record<string, PromoteState>>>();
    expectTypeOf<PromoteState['outcome']>().toEqualTypeOf<PromoteOutcome | undefined>();
    expectTypeOf<PromoteOutcome>().toEqualTypeOf<'completed' | 'errored' | 'cancelled'>();
    expectTypeOf<AppState['lastBuild']>().toEqualTypeOf<BuildState | undefined>();
    expectTypeOf<AppState['lastRelease']>().toEqualTypeOf<ReleaseState | undefined>();
    expectTypeOf<AppState['updatedAt']>().toEqualTypeOf<string>();
    expectTypeOf<AutoShutdownState['expectedShutdownAt']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<AutoShutdownState['previous']>().toEqualTypeOf<PhaseEnd | undefined>();
  });

  it('the state is read-only to its readers', () => {
    const app = createRackState().app('billing-api')!;
    // @ts-expect-error readonly
    app.autoShutdown = { phase: 'idle' };
    // @ts-expect-error readonly
    app.breaker.state = 'tripped';
  });

  it('Anomaly: its kind union, app, id and events', () => {
    expectTypeOf<Anomaly['kind']>().toEqualTypeOf<AnomalyKind>();
    expectTypeOf<AnomalyKind>().toEqualTypeOf<
      'promote_multiple_terminals' | 'promote_terminal_without_start' | 'fired_without_armed' | 'restored_without_fired'
    >();
    expectTypeOf<Anomaly['events']>().toEqualTypeOf<readonly AnyWebhookEvent[]>();
  });

  it('state.apply fits receiver.onAny as it is, unbound', () => {
    const state = createRackState();
    createReceiver({ secrets: 'k' }).onAny(state.apply);
    createReceiver({ secrets: 'k' }).onAny((event) => state.apply(event));
  });
});
