import type { RackClient } from '../../rack-api/client.js';
import type { RetentionOptions, RetentionResult } from '../retention/options.js';

/**
 * Which rule raised an alert. `reconcile_gap`, `reconcile_failed` and `reconcile_token` come from
 * the scheduled reconcile (`reconcile` of {@link WatchOptions}), the others from the log.
 */
export type AlertRule =
  | 'dead'
  | 'backlog'
  | 'no_worker'
  | 'refusals'
  | 'silence'
  | 'overdue_lifecycle'
  | 'log_gap'
  | 'reconcile_gap'
  | 'reconcile_failed'
  | 'reconcile_token';

/** `critical`: events are being lost or nothing runs them; `warning`: something is late. */
export type AlertSeverity = 'critical' | 'warning';

/**
 * What `onAlert` receives: once when an incident opens, once when it resolves. Serialises to JSON
 * as is (dates as ISO strings); never holds a body, a signature, a header value or a secret.
 */
export interface Alert {
  /** `open` when the incident begins, `resolved` when its condition no longer holds. */
  readonly status: 'open' | 'resolved';
  /** The rule. */
  readonly rule: AlertRule;
  /** How urgent: `critical` needs someone now, `warning` needs a look soon. */
  readonly severity: AlertSeverity;
  /**
   * The incident's identity, stable from open to resolve (`dead`, `refusals:signature_mismatch`,
   * `overdue_lifecycle:billing-api:<tick_id>`, `log_gap:billing-api:release:create:<release id>`):
   * use it as the pager's dedup key.
   */
  readonly key: string;
  /** The incident's row id: unique across incidents of this inbox, also across reopenings of one key. */
  readonly incidentId: string;
  /** One line for people, e.g. `3 deliveries went dead in rack_webhooks_inbox since 10:42:07 UTC (…)`. */
  readonly summary: string;
  /** When the condition began (the first dead delivery, the last delivery before a silence, …). */
  readonly since: Date;
  /** When the watcher opened the incident. */
  readonly openedAt: Date;
  /** When it resolved; `null` while open. */
  readonly resolvedAt: Date | null;
  /** The inbox's table, as configured (tells several inboxes apart). */
  readonly table: string;
  /** The rule's structured fields as of the last evaluation (counts, ids, code, app, bound, …). */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** Options of the `dead` rule. */
export interface DeadRuleOptions {
  /**
   * A delivery that went dead in this window and is still dead keeps the incident open: deliveries
   * going dead while it is open join it (one alert per burst); it resolves once they were retried
   * or pruned, or this long after the last one went dead.
   *
   * @defaultValue `3_600_000` (1 hour)
   */
  windowMs?: number;
}

/** Options of the `backlog` rule. */
export interface BacklogRuleOptions {
  /**
   * Alert when a pending delivery has been due (received, or its retry time come) this long
   * without a worker taking it.
   *
   * @defaultValue `300_000` (5 minutes)
   */
  afterMs?: number;
}

/** Options of the `noWorker` rule. */
export interface NoWorkerRuleOptions {
  /**
   * Alert when no worker has beaten for this long (a worker is live while its last heartbeat is
   * within 3 of its beats).
   *
   * @defaultValue `120_000` (2 minutes)
   */
  afterMs?: number;
}

/** Options of the `refusals` rule. */
export interface RefusalsRuleOptions {
  /**
   * Alert when more than this many deliveries were refused with one code in the window.
   *
   * @defaultValue `10`
   */
  threshold?: number;
  /**
   * Per-code thresholds (`{ timestamp_too_old: 50 }`), over `threshold`.
   *
   * @defaultValue `threshold` for every code
   */
  byCode?: Readonly<Record<string, number>>;
  /**
   * The window, in ms (refusals are counted per minute).
   *
   * @defaultValue `300_000` (5 minutes)
   */
  windowMs?: number;
}

/** Options of the `silence` rule. */
export interface SilenceRuleOptions {
  /**
   * Alert when no delivery was accepted for this long…
   *
   * @defaultValue `900_000` (15 minutes)
   */
  afterMs?: number;
  /**
   * …while at least `minDeliveries` arrived in this span before the last one (a rack that was
   * sending: the auto-shutdown reconciler's `:noop` makes a steady rack audible).
   *
   * @defaultValue `3_600_000` (1 hour)
   */
  lookbackMs?: number;
  /** @defaultValue `3` */
  minDeliveries?: number;
}

/** Options of the `overdueLifecycle` rule. */
export interface OverdueLifecycleRuleOptions {
  /**
   * Alert when an armed auto-shutdown countdown has no outcome (fired, failed, cancelled) this long
   * after its `expected_shutdown_at`.
   *
   * @defaultValue `1_800_000` (30 minutes)
   */
  graceMs?: number;
  /**
   * How far back, in event time, the lifecycle events are folded with `createRackState`.
   *
   * @defaultValue `172_800_000` (48 hours)
   */
  lookbackMs?: number;
}

/** Options of the `logGaps` rule (rack-api.md section 4: what the log itself shows was lost). */
export interface LogGapsRuleOptions {
  /**
   * How long an event the rack sent beside another one (just before it, in the same handler or
   * tick) may still be in flight: the evidence waits this long, after both its own timestamp and
   * its arrival, before its partner is missing.
   *
   * @defaultValue `600_000` (10 minutes)
   */
  graceMs?: number;
  /**
   * How long after a `release:promote` its outcome (`app:promote:completed`, `errored` or
   * `cancelled`) may come: the rollout's deadline, then the rack's sweep (up to an hour).
   *
   * @defaultValue `7_200_000` (2 hours)
   */
  promoteOutcomeMs?: number;
  /**
   * How far back, in event time, the log is read; never further than retention keeps done,
   * ignored and duplicate deliveries. A gap's incident resolves when its evidence leaves it.
   *
   * @defaultValue `172_800_000` (48 hours)
   */
  lookbackMs?: number;
}

/** Every rule is on by default; `false` turns one off. */
export interface AlertRules {
  /** Deliveries that went dead. */
  dead?: DeadRuleOptions | false;
  /** The oldest due delivery waiting longer than a bound. */
  backlog?: BacklogRuleOptions | false;
  /** No live worker for a bound. */
  noWorker?: NoWorkerRuleOptions | false;
  /** Refusals above a bound in a window, per refusal code. */
  refusals?: RefusalsRuleOptions | false;
  /** No delivery accepted for a bound, after the rack was sending. */
  silence?: SilenceRuleOptions | false;
  /** An armed auto-shutdown countdown with no outcome well past its expected shutdown time. */
  overdueLifecycle?: OverdueLifecycleRuleOptions | false;
  /** An event the log shows the rack sent (a build's release, a promote's outcome, a countdown's `:armed`, ...) that never arrived. */
  logGaps?: LogGapsRuleOptions | false;
}

/**
 * A reconcile against the rack's read API on a schedule (docs/reconcile.md, "On a schedule"): each
 * new gap raises one `reconcile_gap` alert, a failed pass one `reconcile_failed`, a token about to
 * lapse one `reconcile_token`. One pass at a time across watchers: it runs under the watch lease.
 */
export interface WatchReconcileOptions {
  /** The rack's API, from `createRackClient` (a read token). */
  client: RackClient;
  /**
   * How often a pass runs, from 1 minute to 24 hours. The default is well inside the shortest
   * evidence window of rack-api.md 3.5: an auto-shutdown state (its tick id and every
   * notification stamp) is deleted by a cancel or a cap raise during the armed countdown and by a
   * budget reset, so a slower poller loses that proof for good; builds, releases and the monthly
   * budget stamps last far longer.
   *
   * @defaultValue `900_000` (15 minutes)
   */
  everyMs?: number;
  /**
   * How far back each pass looks; at least `everyMs` plus a minute (the reconcile's grace period),
   * so consecutive passes overlap: a pass that failed, or that the lease skipped while it changed
   * hands, is covered by the next one. A pass also reaches back to the proof of every gap still
   * open, to see whether it arrived.
   *
   * @defaultValue twice `everyMs`
   */
  windowMs?: number;
  /**
   * Only these apps.
   *
   * @defaultValue every app of `GET /apps`
   */
  apps?: readonly string[];
  /**
   * Store each missing event as a reconstructed delivery (`reconcile`'s `record`).
   *
   * @defaultValue `false`: read-only
   */
  record?: boolean;
  /**
   * A `reconcile_token` warning opens this long before the token's `expiresAt`.
   *
   * @defaultValue `604_800_000` (7 days)
   */
  expiryWarningMs?: number;
  /**
   * A gap still open this long after its proof resolves (its event never came, and someone had
   * that long to act on it): passes stop reading back that far.
   *
   * @defaultValue `604_800_000` (7 days)
   */
  keepOpenMs?: number;
}

/** Options of `inbox.watch()`. */
export interface WatchOptions {
  /**
   * Called once when an incident opens and once when it resolves. An alert it throws on (or that a
   * crash cut off) is offered again at the next evaluation. Without it, no alert rule runs
   * (retention only).
   *
   * @defaultValue none: no alert rule runs
   */
  onAlert?: (alert: Alert) => void | Promise<void>;
  /**
   * The rules and their bounds.
   *
   * @defaultValue every rule, with its default bounds
   */
  rules?: AlertRules;
  /**
   * Automatic pruning by state, in bounded batches; `false` turns it off.
   *
   * @defaultValue done, ignored and duplicate deliveries after 30 days; dead and pending never
   */
  retention?: RetentionOptions | false;
  /**
   * How often to evaluate, in ms.
   *
   * @defaultValue `30_000`
   */
  intervalMs?: number;
  /**
   * Names this watcher in its lease.
   *
   * @defaultValue `watcher-` and 8 random characters
   */
  watcherId?: string;
  /**
   * Failures of the watcher itself (the database away, onAlert throwing).
   *
   * @defaultValue one line on stderr per distinct failure
   */
  onError?: (error: Error) => void;
  /** The clock (tests, replays). @defaultValue `() => new Date()` */
  now?: () => Date;
  /**
   * Reconcile against the rack's read API on a schedule; needs `onAlert`.
   *
   * @defaultValue none: no scheduled reconcile
   */
  reconcile?: WatchReconcileOptions;
}

/** What one evaluation did. */
export interface CheckResult {
  /** `false` when another watcher holds the lease: this one evaluated nothing. */
  readonly evaluated: boolean;
  /** The alerts handed to onAlert, in order. */
  readonly alerts: readonly Alert[];
}

/** A running watcher, as `inbox.watch()` returns it. */
export interface Watcher {
  /** Its `watcherId`. */
  readonly id: string;
  /** Evaluates now, if this watcher holds (or can take) the lease. */
  check(): Promise<CheckResult>;
  /** Runs one full retention pass now, if this watcher holds (or can take) the lease. */
  prune(): Promise<RetentionResult>;
  /** The incidents open now (from the table: any watcher's). */
  incidents(): Promise<Alert[]>;
  /** Stops the loop, waits for an evaluation or retention batch in flight, and gives the lease up. */
  stop(): Promise<void>;
}
