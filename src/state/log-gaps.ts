/**
 * Gaps a receiver can find in its own log, with no API call: the rules of rack-api.md section 4,
 * each an event that implies another one the rack sent (before it, or after it within a bound).
 * Pure: the same set of logged events, `now` and horizon give the same gaps, whatever their order
 * or copies. A partner counts wherever it sits in the set (its time is never checked): only the
 * partner's absence raises, and only once the evidence has waited its bound.
 */
import { timestampNanos } from '../events/compare.js';
import type { AnyWebhookEvent } from '../events/types.js';
import { appOf } from './fold.js';
import { field } from './read-field.js';

/** Each rule of rack-api.md section 4 this checks, by the event that went missing. */
export type LogGapRule =
  /** Rule 1: a successful `build:create` names its `release_id`; that release's `release:create` was sent before it. */
  | 'build_without_release'
  /** Rule 2: a `release:promote` gets one `app:promote:*` outcome within the promote bound. */
  | 'promote_without_outcome'
  /** Rule 2: an `app:promote:*` outcome without its `release:promote` start. */
  | 'outcome_without_promote'
  /** Rule 3: `app:create` comes after the creation's `release:promote` with `id` `""`. */
  | 'app_create_without_promote'
  /** Rule 4: `:fired`, tick `:failed`, `:cancelled`, `:restored`, `:expired` of tick T without `:armed` of T. */
  | 'shutdown_without_armed'
  /** Rule 4: `:expired` or a tick `:restored` (`manual-detected`) of T without `:fired` or `:failed` of T. */
  | 'shutdown_end_without_shutdown';

/** One delivery of the log, as the rules read it. */
export interface LoggedEvent {
  readonly event: AnyWebhookEvent;
  /** The delivery's id. */
  readonly deliveryId: string;
  /** When the receiver stored it, in ms since the epoch. */
  readonly receivedAtMs: number;
}

/** A delivery that implies the missing event. */
export interface GapEvidence {
  readonly deliveryId: string;
  readonly action: string;
  /** The event's own timestamp, as sent. */
  readonly eventTime: string;
  readonly receivedAt: string;
}

/** An event the rack sent that this log lacks, past its bound. */
export interface LogGap {
  /** `<app>:<missing>:<id>`: one per missing event, whichever rules point at it. */
  readonly key: string;
  /** The rules that point at it. */
  readonly rules: readonly LogGapRule[];
  readonly app: string;
  /** The release id (build and promote rules, `""` for an app's creation) or the `tick_id` (auto-shutdown). */
  readonly id: string;
  /** The action that went missing; `a|b` when the rack sent one of them. */
  readonly missing: string;
  /** The deliveries that imply it, oldest first (at most {@link MAX_EVIDENCE}). */
  readonly evidence: readonly GapEvidence[];
  /** The oldest evidence's event time, in ms. */
  readonly sinceMs: number;
  /** The bound the evidence waited for the missing event: the grace period, or the promote bound. */
  readonly boundMs: number;
}

export interface LogGapOptions {
  readonly nowMs: number;
  /** The earliest event time in the set (ms): evidence whose partner may sit before it is not judged. */
  readonly horizonMs: number;
  /** How long an event sent beside the evidence may still be in flight. */
  readonly graceMs: number;
  /** How long a promote may run before its outcome is sent. */
  readonly promoteOutcomeMs: number;
}

export const MAX_EVIDENCE = 20;

const SHUTDOWN = 'app:budget:auto-shutdown:';
const OUTCOMES = ['app:promote:completed', 'app:promote:errored', 'app:promote:cancelled'];
/** The tick events that reuse their lifecycle's `tick_id`, so imply its `:armed`. */
const NEEDS_ARMED = new Set(['fired', 'failed', 'cancelled', 'restored', 'expired'].map((name) => SHUTDOWN + name));
/** A promote may legitimately end with no outcome sent (the api shutting down, the app's namespace gone). */
const UNCERTAIN_RULES: ReadonlySet<LogGapRule> = new Set<LogGapRule>(['promote_without_outcome']);

/** The release id as the rack matches it: case-insensitive. `""` (an app's creation) is an id. */
const releaseId = (data: unknown): string | undefined => {
  const value = (data as Record<string, unknown>)['id'];
  return typeof value === 'string' ? value.toUpperCase() : undefined;
};
const isDryRun = (data: unknown) => {
  const value = (data as Record<string, unknown>)['dry_run'];
  return value === 'true' || value === true;
};
const msOf = (timestamp: string): number | undefined => {
  const nanos = timestampNanos(timestamp);
  return nanos === undefined ? undefined : Number(nanos / 1_000_000n);
};
/** The time a tick's id carries (`tick-<RFC 3339 second>-<hex>`): its `:armed` was sent at or after it. */
const tickMs = (tickId: string): number | undefined => {
  const match = /^tick-(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)-/.exec(tickId);
  return match === null ? undefined : msOf(match[1]!);
};

/** What one pass over the events found: partners present, and evidence that needs one. */
interface Index {
  readonly present: Set<string>;
  readonly needs: Map<string, { app: string; id: string; missing: string; rules: Set<LogGapRule>; evidence: LoggedEvent[]; due: boolean }>;
}

/**
 * Evidence `logged` implies `missing` (a partner key) of `app`/`id`; `partnerFromMs` is the earliest
 * event time the partner can have; `boundMs` how long after the evidence (sent and stored) it may
 * still arrive.
 */
function need(
  index: Index,
  options: LogGapOptions,
  logged: LoggedEvent,
  rule: LogGapRule,
  gap: { app: string; id: string; missing: string; partnerFromMs: number | undefined; boundMs: number },
): void {
  const eventMs = msOf(logged.event.timestamp);
  // A partner that may sit before what was read cannot be judged missing; nor can an event with no time.
  if (eventMs === undefined || gap.partnerFromMs === undefined || gap.partnerFromMs < options.horizonMs) return;
  const key = `${gap.app}:${gap.missing}:${gap.id}`;
  let entry = index.needs.get(key);
  if (entry === undefined)
    index.needs.set(key, (entry = { app: gap.app, id: gap.id, missing: gap.missing, rules: new Set(), evidence: [], due: false }));
  entry.rules.add(rule);
  entry.evidence.push(logged);
  if (options.nowMs - Math.max(eventMs, logged.receivedAtMs) >= gap.boundMs) entry.due = true;
}

function indexEvent(index: Index, options: LogGapOptions, logged: LoggedEvent): void {
  const { event } = logged;
  const data = event.data as Record<string, unknown>;
  const app = appOf(event);
  if (app === undefined || typeof event.action !== 'string') return;
  const action = event.action;
  const eventMs = msOf(event.timestamp);
  const grace = options.graceMs;
  const id = releaseId(data);
  if (action === 'release:create' && id !== undefined) index.present.add(`${app}:release:create:${id}`);
  if (action === 'release:promote') {
    // Parameter updates send it again for the same id: any outcome of the pair answers every start.
    index.present.add(`${app}:release:promote:${id ?? ''}`);
    if (id !== undefined)
      need(index, options, logged, 'promote_without_outcome', {
        app,
        id,
        missing: OUTCOME_LABEL,
        partnerFromMs: eventMs,
        boundMs: options.promoteOutcomeMs,
      });
  }
  if (OUTCOMES.includes(action) && id !== undefined) {
    index.present.add(`${app}:${OUTCOME_LABEL}:${id}`);
    need(index, options, logged, 'outcome_without_promote', {
      app,
      id,
      missing: 'release:promote',
      partnerFromMs: eventMs === undefined ? undefined : eventMs - options.promoteOutcomeMs,
      boundMs: grace,
    });
  }
  if (action === 'build:create' && event.status === 'success') {
    const release = field(data, 'release_id')?.toUpperCase();
    // An import or a failed build owes no release:create (rack-api.md 3.2).
    if (release !== undefined)
      need(index, options, logged, 'build_without_release', {
        app,
        id: release,
        missing: 'release:create',
        partnerFromMs: eventMs === undefined ? undefined : eventMs - grace,
        boundMs: grace,
      });
  }
  if (action === 'app:create')
    need(index, options, logged, 'app_create_without_promote', {
      app,
      id: '',
      missing: 'release:promote',
      partnerFromMs: eventMs === undefined ? undefined : eventMs - grace,
      boundMs: grace,
    });
  if (action.startsWith(SHUTDOWN)) indexShutdown(index, options, logged, app, data);
}

const OUTCOME_LABEL = 'app:promote:completed|errored|cancelled';
const ARMED = `${SHUTDOWN}armed`;
const SHUT_DOWN_LABEL = `${SHUTDOWN}fired|failed`;

function indexShutdown(index: Index, options: LogGapOptions, logged: LoggedEvent, app: string, data: Record<string, unknown>): void {
  const action = logged.event.action;
  const tickId = field(data, 'tick_id');
  if (tickId === undefined) return;
  // Any copy counts as present; only a real lifecycle (not a dry run) implies a partner.
  if (action === ARMED) index.present.add(`${app}:${ARMED}:${tickId}`);
  if (action === `${SHUTDOWN}fired` || action === `${SHUTDOWN}failed`) index.present.add(`${app}:${SHUT_DOWN_LABEL}:${tickId}`);
  if (isDryRun(data)) return;
  const tickFromMs = tickMs(tickId);
  const partnerFromMs = tickFromMs === undefined ? undefined : tickFromMs - options.graceMs;
  // A :failed for a corrupt stored state carries a new tick_id, armed by nothing.
  const corrupt = action === `${SHUTDOWN}failed` && field(data, 'failure_reason') === 'state-corrupt';
  if (NEEDS_ARMED.has(action) && !corrupt)
    need(index, options, logged, 'shutdown_without_armed', {
      app,
      id: tickId,
      missing: ARMED,
      partnerFromMs,
      boundMs: options.graceMs,
    });
  // Both need a recorded shutdown time; a budget reset's :restored (actor: the user) does not say.
  const tickRestore =
    action === `${SHUTDOWN}restored` && field(data, 'recovery_trigger') === 'manual-detected' && field(data, 'actor') === 'system';
  if (action === `${SHUTDOWN}expired` || tickRestore)
    need(index, options, logged, 'shutdown_end_without_shutdown', {
      app,
      id: tickId,
      missing: SHUT_DOWN_LABEL,
      partnerFromMs,
      boundMs: options.graceMs,
    });
}

function evidenceOf(logged: LoggedEvent): GapEvidence {
  return {
    deliveryId: logged.deliveryId,
    action: logged.event.action,
    eventTime: logged.event.timestamp,
    receivedAt: new Date(logged.receivedAtMs).toISOString(),
  };
}

/** Whether the rules that found a gap are sure the missing event was sent (a promote's outcome may not be). */
export function gapIsCertain(rules: readonly LogGapRule[]): boolean {
  return rules.some((rule) => !UNCERTAIN_RULES.has(rule));
}

/** The gaps in `events`, past their bounds, by key. */
export function findLogGaps(events: Iterable<LoggedEvent>, options: LogGapOptions): LogGap[] {
  const index: Index = { present: new Set(), needs: new Map() };
  for (const logged of events) indexEvent(index, options, logged);
  const gaps: LogGap[] = [];
  for (const [key, entry] of index.needs) {
    if (!entry.due || index.present.has(key)) continue;
    const evidence = [...entry.evidence].sort(
      (a, b) => (msOf(a.event.timestamp) ?? 0) - (msOf(b.event.timestamp) ?? 0) || compareIds(a.deliveryId, b.deliveryId),
    );
    // Copies of one delivery (the same id) are one piece of evidence.
    const unique = evidence.filter((logged, i) => i === 0 || logged.deliveryId !== evidence[i - 1]!.deliveryId);
    const rules = [...entry.rules].sort();
    gaps.push({
      key,
      rules,
      app: entry.app,
      id: entry.id,
      missing: entry.missing,
      evidence: unique.slice(0, MAX_EVIDENCE).map(evidenceOf),
      sinceMs: msOf(unique[0]!.event.timestamp)!,
      boundMs: rules.includes('promote_without_outcome') ? options.promoteOutcomeMs : options.graceMs,
    });
  }
  return gaps.sort((a, b) => a.sinceMs - b.sinceMs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Delivery ids are decimal: shorter is smaller. */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
