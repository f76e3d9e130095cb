import type { AnyWebhookEvent } from '../events/types.js';

/**
 * Where an app's auto-shutdown lifecycle stands. `restored` means services came back and the
 * recovery banner is still up (until `:dismissed`).
 */
export type AutoShutdownPhase = 'idle' | 'armed' | 'shut-down' | 'shutdown-failed' | 'restored';

/** What ended a phase: the event's action (its last segment) and, for `:cancelled`, the reason. */
export interface PhaseEnd {
  /** The phase that ended. */
  readonly phase: AutoShutdownPhase;
  /** `cancelled`, `expired`, `dismissed`, `fired`, `failed`, `restored`, or `armed` (a new countdown). */
  readonly by: string;
  /** For `cancelled`: the event's `cancel_reason` (`reset-during-armed`, `cap-raised`, `manual-detected`, `config-changed`, `countdown-lapsed`, or a newer one). */
  readonly cancelReason?: string;
  /** The timestamp of the event that ended it. */
  readonly at: string;
  /** The `tick_id` of the event that ended it. */
  readonly tickId?: string;
  /** Who ended it (`data.actor`), when the event says. */
  readonly actor?: string;
}

/** An app's auto-shutdown lifecycle, as {@link AppState.autoShutdown}. */
export interface AutoShutdownState {
  /** The current phase. */
  readonly phase: AutoShutdownPhase;
  /** The `tick_id` of the sequence the current phase belongs to. */
  readonly tickId?: string;
  /** The timestamp of the event that entered the current phase. */
  readonly since?: string;
  /** While armed, when sent: when the countdown began and when services will be scaled to zero. */
  readonly scheduledAt?: string;
  /** While armed, when sent: when services will be scaled to zero. */
  readonly expectedShutdownAt?: string;
  /** Who entered the current phase (`data.actor`), when the event says. */
  readonly actor?: string;
  /** How the previous phase ended. */
  readonly previous?: PhaseEnd;
  /** The last `:flap-suppressed` (information only: it changes no phase). */
  readonly lastFlapSuppressed?: {
    /** Its timestamp. */
    readonly at: string;
    /** Its `tick_id`. */
    readonly tickId?: string;
  };
}

/** An app's deploy circuit breaker, as {@link AppState.breaker}. */
export interface BreakerState {
  /** `tripped` by a cap crossing (unless the budget's at-cap action is known to be another one). */
  readonly state: 'closed' | 'tripped';
  /** The timestamp of the event that last changed it; absent while it never changed. */
  readonly since?: string;
  /** The action that last changed it: `app:budget:cap`, `app:budget:breaker-cleared`, `app:budget:reset`, `app:budget:clear`. */
  readonly by?: string;
}

/** An app's budget as last set and its last crossings, as {@link AppState.budget}; money as decimal strings. */
export interface BudgetState {
  /** The monthly cap in USD as last set (`app:budget:set`); undefined after `app:budget:clear` or before any set. */
  readonly capUsd?: string;
  /** What happens at the cap as last set: `alert-only`, `block-new-deploys`, `auto-shutdown`, or a newer value. */
  readonly atCapAction?: string;
  /** The alert threshold, in percent of the cap, as last set. */
  readonly alertThresholdPercent?: string;
  /** When the budget was last set. */
  readonly setAt?: string;
  /** Who last set it. */
  readonly setBy?: string;
  /** The last threshold crossing (`app:budget:threshold`), by event timestamp. */
  readonly lastThresholdAt?: string;
  /** The last cap crossing (`app:budget:cap`). */
  readonly lastCapAt?: string;
  /** The last reset (`app:budget:reset`). */
  readonly lastResetAt?: string;
  /** When the budget was removed (`app:budget:clear`); absent once it is set again. */
  readonly clearedAt?: string;
}

/** One service's scale override (`app:scale-override:toggled`). */
export interface ScaleOverride {
  /** `on` or `off` (or a newer value). */
  readonly state: 'on' | 'off' | string;
  /** When it was last toggled. */
  readonly at: string;
  /** Who toggled it. */
  readonly actor?: string;
}

/** One service's per-service autoscaler (`app:triggers-override:*`). */
export interface TriggersOverride {
  /** `on` or `off` (or a newer value), once toggled. */
  readonly state?: 'on' | 'off' | string;
  /** The autoscaler resource the override owns: `hpa` or the event-driven autoscaler's kind. */
  readonly crd?: string;
  /** When it last changed. */
  readonly at: string;
  /** The last threshold set per canonical trigger type. */
  readonly thresholds: Readonly<Record<string, string>>;
}

/** How a promote ended: `app:promote:completed`, `:errored` or `:cancelled`. */
export type PromoteOutcome = 'completed' | 'errored' | 'cancelled';

/** One promote of a release. */
export interface PromoteState {
  /** The release id (`data.id`). */
  readonly releaseId: string;
  /** `release:promote` (status `start`) when seen. */
  readonly startedAt?: string;
  /** Who promoted it. */
  readonly actor?: string;
  /** The terminal outcome: the earliest terminal event by timestamp. */
  readonly outcome?: PromoteOutcome;
  /** The timestamp of that terminal event. */
  readonly endedAt?: string;
  /** The terminal event's `data.message` (the error detail of `errored`). */
  readonly message?: string;
}

/** The app's last build event (`build:create`, `build:import-image:start` or `:done`, `build:cancel`). */
export interface BuildState {
  /** The build id, when the event carries one. */
  readonly id?: string;
  /** The event's action. */
  readonly action: string;
  /** The event's status (`error` for a failed build). */
  readonly status: string;
  /** The event's timestamp. */
  readonly at: string;
  /** `data.message`, when sent. */
  readonly message?: string;
}

/** The app's last `release:create`. */
export interface ReleaseState {
  /** The release id. */
  readonly id?: string;
  /** The event's timestamp. */
  readonly at: string;
}

/** One app's state, folded from its events in timestamp order. */
export interface AppState {
  /** The app's name. */
  readonly app: string;
  /** The auto-shutdown lifecycle. */
  readonly autoShutdown: AutoShutdownState;
  /** The deploy circuit breaker. */
  readonly breaker: BreakerState;
  /** The budget as last set, and the last crossings. */
  readonly budget: BudgetState;
  /** Scale overrides by service name. */
  readonly scaleOverrides: Readonly<Record<string, ScaleOverride>>;
  /** Per-service autoscalers by service name. */
  readonly triggersOverrides: Readonly<Record<string, TriggersOverride>>;
  /** Promotes by release id (the newest 1,000). */
  readonly promotes: Readonly<Record<string, PromoteState>>;
  /** The last build event. */
  readonly lastBuild?: BuildState;
  /** The last release created. */
  readonly lastRelease?: ReleaseState;
  /** The newest event timestamp folded into this app. */
  readonly updatedAt: string;
}

/** What {@link RackState.anomalies} can report. */
export type AnomalyKind =
  'promote_multiple_terminals' | 'promote_terminal_without_start' | 'fired_without_armed' | 'restored_without_fired';

/** Something the spec says cannot happen, with the events involved. */
export interface Anomaly {
  /** Which rule the events break. */
  readonly kind: AnomalyKind;
  /** The app. */
  readonly app: string;
  /** The release id (promotes) or the tick_id (auto-shutdown). */
  readonly id: string;
  /** One line for people. */
  readonly message: string;
  /** The events involved. */
  readonly events: readonly AnyWebhookEvent[];
}

/**
 * What every transition tells.
 *
 * @inline
 */
interface TransitionBase {
  /** The app whose state changed. */
  readonly app: string;
  /** The event whose arrival caused the change (it may be older than the newest event: late). */
  readonly event: AnyWebhookEvent;
  /** True when the event sorted before events already applied for the app. */
  readonly late: boolean;
}

/** The current value of one lifecycle changed; `from` and `to` are typed per lifecycle. */
export type PhaseTransition =
  | (TransitionBase & {
      /** The auto-shutdown lifecycle changed phase. */
      readonly lifecycle: 'auto-shutdown';
      /** The phase before. */
      readonly from: AutoShutdownPhase;
      /** The phase now. */
      readonly to: AutoShutdownPhase;
    })
  | (TransitionBase & {
      /** The deploy breaker tripped or closed. */
      readonly lifecycle: 'breaker';
      /** The breaker's state before. */
      readonly from: BreakerState['state'];
      /** The breaker's state now. */
      readonly to: BreakerState['state'];
    });

/** What {@link RackState.apply} did with an event. */
export interface ApplyResult {
  /** False for a duplicate, an event without an app, a timestamp that is not RFC 3339, or one older than the window. */
  readonly applied: boolean;
  /** The event's app, when it has one. */
  readonly app?: string;
  /** Why the event was not applied. */
  readonly reason?: 'duplicate' | 'no_app' | 'invalid_timestamp' | 'outside_window';
  /** Sorted before events already applied for the app, so the app was folded again from there. */
  readonly late: boolean;
  /** The changes of the app's current phases the event caused (what `onTransition` listeners are told). */
  readonly transitions: readonly PhaseTransition[];
}

/** Options of {@link createRackState}. */
export interface RackStateOptions {
  /**
   * How much event time each app keeps re-foldable, measured back from the app's newest event;
   * at least 24 hours. An event older than that is refused as `outside_window`.
   *
   * @defaultValue `86400000` (24 hours)
   */
  windowMs?: number;
  /**
   * How long (event time) a missing partner event is waited for before it is an anomaly.
   *
   * @defaultValue `600000` (10 minutes)
   */
  gracePeriodMs?: number;
}

/** Every app's lifecycles, as {@link createRackState} returns them. */
export interface RackState {
  /** Folds one event in, whatever order it arrives in; applying it twice changes nothing. */
  apply(event: AnyWebhookEvent): ApplyResult;
  /** One app's state, or `undefined` for an app never seen. */
  app(name: string): AppState | undefined;
  /** Every app's state. */
  apps(): readonly AppState[];
  /** What the spec says cannot happen, judged in event time after the grace period. */
  anomalies(): readonly Anomaly[];
  /** Told once per change of an app's current auto-shutdown phase or breaker state. Returns the unsubscribe. */
  onTransition(listener: (transition: PhaseTransition) => void): () => void;
}
