import type { AnyWebhookEvent } from '../events/types.js';

/**
 * Where an app's auto-shutdown lifecycle stands. `restored` means services came back and the
 * recovery banner is still up (until `:dismissed`).
 */
export type AutoShutdownPhase = 'idle' | 'armed' | 'shut-down' | 'shutdown-failed' | 'restored';

/** What ended a phase: the event's action (its last segment) and, for `:cancelled`, the reason. */
export interface PhaseEnd {
  readonly phase: AutoShutdownPhase;
  /** `cancelled`, `expired`, `dismissed`, `fired`, `failed`, `restored`, or `armed` (a new countdown). */
  readonly by: string;
  readonly cancelReason?: string;
  readonly at: string;
  readonly tickId?: string;
  readonly actor?: string;
}

export interface AutoShutdownState {
  readonly phase: AutoShutdownPhase;
  /** The `tick_id` of the sequence the current phase belongs to. */
  readonly tickId?: string;
  /** The timestamp of the event that entered the current phase. */
  readonly since?: string;
  /** While armed, when sent: when the countdown began and when services will be scaled to zero. */
  readonly scheduledAt?: string;
  readonly expectedShutdownAt?: string;
  readonly actor?: string;
  /** How the previous phase ended. */
  readonly previous?: PhaseEnd;
  /** The last `:flap-suppressed` (information only: it changes no phase). */
  readonly lastFlapSuppressed?: { readonly at: string; readonly tickId?: string };
}

export interface BreakerState {
  /** `tripped` by a cap crossing (unless the budget's at-cap action is known to be another one). */
  readonly state: 'closed' | 'tripped';
  readonly since?: string;
  /** The action that last changed it: `app:budget:cap`, `app:budget:breaker-cleared`, `app:budget:reset`, `app:budget:clear`. */
  readonly by?: string;
}

export interface BudgetState {
  /** As last set (`app:budget:set`); undefined after `app:budget:clear` or before any set. */
  readonly capUsd?: string;
  readonly atCapAction?: string;
  readonly alertThresholdPercent?: string;
  readonly setAt?: string;
  readonly setBy?: string;
  /** The last crossings, by event timestamp. */
  readonly lastThresholdAt?: string;
  readonly lastCapAt?: string;
  readonly lastResetAt?: string;
  readonly clearedAt?: string;
}

export interface ScaleOverride {
  readonly state: 'on' | 'off' | string;
  readonly at: string;
  readonly actor?: string;
}

export interface TriggersOverride {
  readonly state?: 'on' | 'off' | string;
  readonly crd?: string;
  readonly at: string;
  /** The last threshold set per canonical trigger type. */
  readonly thresholds: Readonly<Record<string, string>>;
}

export type PromoteOutcome = 'completed' | 'errored' | 'cancelled';

export interface PromoteState {
  readonly releaseId: string;
  /** `release:promote` (status `start`) when seen. */
  readonly startedAt?: string;
  readonly actor?: string;
  /** The terminal outcome: the earliest terminal event by timestamp. */
  readonly outcome?: PromoteOutcome;
  readonly endedAt?: string;
  readonly message?: string;
}

export interface BuildState {
  readonly id?: string;
  readonly action: string;
  readonly status: string;
  readonly at: string;
  readonly message?: string;
}

export interface ReleaseState {
  readonly id?: string;
  readonly at: string;
}

/** One app's state, folded from its events in timestamp order. */
export interface AppState {
  readonly app: string;
  readonly autoShutdown: AutoShutdownState;
  readonly breaker: BreakerState;
  readonly budget: BudgetState;
  readonly scaleOverrides: Readonly<Record<string, ScaleOverride>>;
  readonly triggersOverrides: Readonly<Record<string, TriggersOverride>>;
  readonly promotes: Readonly<Record<string, PromoteState>>;
  readonly lastBuild?: BuildState;
  readonly lastRelease?: ReleaseState;
  /** The newest event timestamp folded into this app. */
  readonly updatedAt: string;
}

export type AnomalyKind =
  | 'promote_multiple_terminals'
  | 'promote_terminal_without_start'
  | 'fired_without_armed'
  | 'restored_without_fired';

/** Something the spec says cannot happen, with the events involved. */
export interface Anomaly {
  readonly kind: AnomalyKind;
  readonly app: string;
  /** The release id (promotes) or the tick_id (auto-shutdown). */
  readonly id: string;
  readonly message: string;
  readonly events: readonly AnyWebhookEvent[];
}

interface TransitionBase {
  readonly app: string;
  /** The event whose arrival caused the change (it may be older than the newest event: late). */
  readonly event: AnyWebhookEvent;
  /** True when the event sorted before events already applied for the app. */
  readonly late: boolean;
}

/** The current value of one lifecycle changed; `from` and `to` are typed per lifecycle. */
export type PhaseTransition =
  | (TransitionBase & { readonly lifecycle: 'auto-shutdown'; readonly from: AutoShutdownPhase; readonly to: AutoShutdownPhase })
  | (TransitionBase & { readonly lifecycle: 'breaker'; readonly from: BreakerState['state']; readonly to: BreakerState['state'] });

export interface ApplyResult {
  /** False for a duplicate, an event without an app, a timestamp that is not RFC 3339, or one older than the window. */
  readonly applied: boolean;
  readonly app?: string;
  readonly reason?: 'duplicate' | 'no_app' | 'invalid_timestamp' | 'outside_window';
  /** Sorted before events already applied for the app, so the app was folded again from there. */
  readonly late: boolean;
  readonly transitions: readonly PhaseTransition[];
}

export interface RackStateOptions {
  /** How much event time each app keeps re-foldable; at least 24 h (the default). */
  windowMs?: number;
  /** How long (event time) a missing partner event is waited for before it is an anomaly. Default 10 minutes. */
  gracePeriodMs?: number;
}

export interface RackState {
  /** Folds one event in, whatever order it arrives in; applying it twice changes nothing. */
  apply(event: AnyWebhookEvent): ApplyResult;
  app(name: string): AppState | undefined;
  apps(): readonly AppState[];
  anomalies(): readonly Anomaly[];
  /** Told once per change of an app's current auto-shutdown phase or breaker state. Returns the unsubscribe. */
  onTransition(listener: (transition: PhaseTransition) => void): () => void;
}
