import type { Clock } from '../clock.js';
import { MAX_TIMER_MS } from '../../shared/timers.js';
import { resolveRetention, type ResolvedRetention } from '../retention/options.js';
import { resolveReconcile, type ResolvedReconcile } from './reconcile-options.js';
import type { Alert, AlertRules, WatchOptions } from './types.js';
import { wholeNumber } from '../whole-number.js';

const MINUTE = 60_000;

export interface ResolvedRules {
  readonly dead?: { readonly windowMs: number };
  readonly backlog?: { readonly afterMs: number };
  readonly noWorker?: { readonly afterMs: number };
  readonly refusals?: { readonly threshold: number; readonly byCode: Readonly<Record<string, number>>; readonly windowMs: number };
  readonly silence?: { readonly afterMs: number; readonly lookbackMs: number; readonly minDeliveries: number };
  readonly overdueLifecycle?: { readonly graceMs: number; readonly lookbackMs: number };
  readonly logGaps?: { readonly graceMs: number; readonly promoteOutcomeMs: number; readonly lookbackMs: number };
}

export interface ResolvedWatchOptions {
  readonly onAlert: ((alert: Alert) => void | Promise<void>) | undefined;
  readonly rules: ResolvedRules;
  readonly retention: ResolvedRetention | undefined;
  readonly intervalMs: number;
  readonly leaseMs: number;
  readonly watcherId: string;
  readonly onError: (error: Error) => void;
  readonly now: () => Date;
  readonly reconcile: ResolvedReconcile | undefined;
}

/** A rule's options object, `undefined` when turned off (`false`). */
function ruleOptions<T extends object>(rules: AlertRules, name: keyof AlertRules): Partial<T> | undefined {
  const given = rules[name];
  if (given === false) return undefined;
  if (given !== undefined && (typeof given !== 'object' || given === null))
    throw new TypeError(`rules.${name} must be an options object or false, got ${String(given)}`);
  return (given ?? {}) as Partial<T>;
}

function resolveRules(rules: AlertRules | undefined): ResolvedRules {
  if (rules !== undefined && (typeof rules !== 'object' || rules === null))
    throw new TypeError('rules must be an object such as { silence: false }');
  const given = rules ?? {};
  const resolved: { -readonly [K in keyof ResolvedRules]: ResolvedRules[K] } = {};
  const dead = ruleOptions<{ windowMs: number }>(given, 'dead');
  if (dead) resolved.dead = { windowMs: wholeNumber('rules.dead.windowMs', dead.windowMs, 60 * MINUTE) };
  const backlog = ruleOptions<{ afterMs: number }>(given, 'backlog');
  if (backlog) resolved.backlog = { afterMs: wholeNumber('rules.backlog.afterMs', backlog.afterMs, 5 * MINUTE) };
  const noWorker = ruleOptions<{ afterMs: number }>(given, 'noWorker');
  if (noWorker) resolved.noWorker = { afterMs: wholeNumber('rules.noWorker.afterMs', noWorker.afterMs, 2 * MINUTE) };
  const refusals = ruleOptions<{ threshold: number; byCode: Record<string, number>; windowMs: number }>(given, 'refusals');
  if (refusals) {
    const byCode: Record<string, number> = {};
    for (const [code, value] of Object.entries(refusals.byCode ?? {}))
      byCode[code] = wholeNumber(`rules.refusals.byCode.${code}`, value, 0, 0);
    resolved.refusals = {
      threshold: wholeNumber('rules.refusals.threshold', refusals.threshold, 10, 0),
      byCode,
      windowMs: wholeNumber('rules.refusals.windowMs', refusals.windowMs, 5 * MINUTE, MINUTE),
    };
  }
  const silence = ruleOptions<{ afterMs: number; lookbackMs: number; minDeliveries: number }>(given, 'silence');
  if (silence)
    resolved.silence = {
      afterMs: wholeNumber('rules.silence.afterMs', silence.afterMs, 15 * MINUTE),
      lookbackMs: wholeNumber('rules.silence.lookbackMs', silence.lookbackMs, 60 * MINUTE),
      minDeliveries: wholeNumber('rules.silence.minDeliveries', silence.minDeliveries, 3),
    };
  const overdue = ruleOptions<{ graceMs: number; lookbackMs: number }>(given, 'overdueLifecycle');
  if (overdue)
    resolved.overdueLifecycle = {
      graceMs: wholeNumber('rules.overdueLifecycle.graceMs', overdue.graceMs, 30 * MINUTE, 0),
      lookbackMs: wholeNumber('rules.overdueLifecycle.lookbackMs', overdue.lookbackMs, 48 * 60 * MINUTE),
    };
  const gaps = ruleOptions<{ graceMs: number; promoteOutcomeMs: number; lookbackMs: number }>(given, 'logGaps');
  if (gaps)
    resolved.logGaps = {
      graceMs: wholeNumber('rules.logGaps.graceMs', gaps.graceMs, 10 * MINUTE, 0),
      promoteOutcomeMs: wholeNumber('rules.logGaps.promoteOutcomeMs', gaps.promoteOutcomeMs, 120 * MINUTE, 0),
      lookbackMs: wholeNumber('rules.logGaps.lookbackMs', gaps.lookbackMs, 48 * 60 * MINUTE),
    };
  return resolved;
}

/** One line on stderr per distinct failure in a row: an outage is told once, not every interval. */
function defaultOnError(): (error: Error) => void {
  let last: string | undefined;
  return (error) => {
    if (error.message === last) return;
    last = error.message;
    console.error(`[rack-webhooks] watch: ${error.message}`);
  };
}

/** Checks every option; throws a `TypeError` or `RangeError` naming the one that is wrong. */
export function resolveWatchOptions(options: WatchOptions | undefined, clock: Clock): ResolvedWatchOptions {
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new TypeError('inbox.watch expects options such as { onAlert: (alert) => ... }');
  const given = options ?? {};
  if (given.onAlert !== undefined && typeof given.onAlert !== 'function') throw new TypeError('onAlert must be a function (alert) => void');
  if (given.onError !== undefined && typeof given.onError !== 'function') throw new TypeError('onError must be a function (error) => void');
  if (given.now !== undefined && typeof given.now !== 'function') throw new TypeError('now must be a function returning a Date');
  const retention = resolveRetention(given.retention);
  if (given.onAlert === undefined && retention === undefined)
    throw new TypeError('inbox.watch has nothing to do: pass onAlert (alerts), or keep retention on');
  const reconcile = resolveReconcile(given.reconcile);
  if (reconcile !== undefined && given.onAlert === undefined)
    throw new TypeError('reconcile needs onAlert: its gaps and failures are told as alerts');
  const intervalMs = wholeNumber('intervalMs', given.intervalMs, 30_000, 1, MAX_TIMER_MS);
  const watcherId = given.watcherId ?? `watcher-${Math.random().toString(36).slice(2, 10)}`;
  if (typeof watcherId !== 'string' || watcherId === '' || watcherId.length > 200)
    throw new TypeError('watcherId must be a non-empty string of at most 200 characters');
  return {
    onAlert: given.onAlert,
    rules: resolveRules(given.rules),
    retention,
    intervalMs,
    // Three missed evaluations (at least 30 s) before another watcher takes over.
    leaseMs: Math.max(3 * intervalMs, 30_000),
    watcherId,
    onError: given.onError ?? defaultOnError(),
    now: given.now ?? (() => clock.date()),
    reconcile,
  };
}
