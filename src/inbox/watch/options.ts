import type { Clock } from '../clock.js';
import type { RackClient } from '../../rack-api/client.js';
import { MAX_TIMER_MS } from '../../shared/timers.js';
import { resolveRetention } from '../retention/options.js';
import type { AlertRules, WatchOptions, WatchReconcileOptions } from './types.js';
import { wholeNumber } from '../whole-number.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** reconcile()'s grace period: proofs this recent are not judged yet, so a window must reach past it. */
const RECONCILE_GRACE_MS = MINUTE;

/** Each rule's bounds as `[default, least]`, in the order they are checked (the docs of types.ts give the defaults). */
const RULE_BOUNDS = {
  dead: { windowMs: [60 * MINUTE, 1] },
  backlog: { afterMs: [5 * MINUTE, 1] },
  noWorker: { afterMs: [2 * MINUTE, 1] },
  refusals: { threshold: [10, 0], windowMs: [5 * MINUTE, MINUTE] },
  silence: { afterMs: [15 * MINUTE, 1], lookbackMs: [60 * MINUTE, 1], minDeliveries: [3, 1] },
  overdueLifecycle: { graceMs: [30 * MINUTE, 0], lookbackMs: [2 * DAY, 1] },
  logGaps: { graceMs: [10 * MINUTE, 0], promoteOutcomeMs: [120 * MINUTE, 0], lookbackMs: [2 * DAY, 1] },
} satisfies Record<keyof AlertRules, Record<string, readonly [number, number]>>;

/** The rules turned on, every bound filled in; a rule turned off (`false`) is absent. */
export type ResolvedRules = { readonly [R in keyof AlertRules]?: Readonly<Required<Exclude<AlertRules[R], false | undefined>>> };

export type ResolvedWatchOptions = ReturnType<typeof resolveWatchOptions>;

export type ResolvedReconcile = NonNullable<ReturnType<typeof resolveReconcile>>;

function resolveRules(rules: AlertRules | undefined): ResolvedRules {
  if (rules !== undefined && (typeof rules !== 'object' || rules === null))
    throw new TypeError('rules must be an object such as { silence: false }');
  const resolved: Record<string, Record<string, unknown>> = {};
  for (const [rule, bounds] of Object.entries(RULE_BOUNDS)) {
    const given: unknown = rules?.[rule as keyof AlertRules];
    if (given === false) continue;
    if (given !== undefined && (typeof given !== 'object' || given === null))
      throw new TypeError(`rules.${rule} must be an options object or false, got ${String(given)}`);
    const options = (given ?? {}) as Record<string, unknown>;
    const own: Record<string, unknown> = (resolved[rule] = {});
    if (rule === 'refusals') {
      const byCode = Object.entries(options['byCode'] ?? {});
      own['byCode'] = Object.fromEntries(byCode.map(([code, value]) => [code, wholeNumber(`rules.refusals.byCode.${code}`, value, 0, 0)]));
    }
    for (const [name, [fallback, min]] of Object.entries(bounds))
      own[name] = wholeNumber(`rules.${rule}.${name}`, options[name], fallback, min);
  }
  return resolved;
}

const reconcileMs = (name: string, value: unknown, fallback: number, min: number, max: number) =>
  wholeNumber(`reconcile.${name}`, value, fallback, min, max, ' of ms');

/** Checks the `reconcile` option of inbox.watch(); throws a `TypeError` or `RangeError` naming what is wrong. */
function resolveReconcile(given: WatchReconcileOptions | undefined) {
  if (given === undefined) return undefined;
  if (typeof given !== 'object' || given === null)
    throw new TypeError('reconcile must be an object such as { client: createRackClient({ url, token }) }');
  const client = given.client as Partial<RackClient> | undefined;
  if (typeof client !== 'object' || client === null || typeof client.apps !== 'function' || typeof client.baseUrl !== 'string')
    throw new TypeError('reconcile.client must be a client of the rack API, from createRackClient({ url, token })');
  const everyMs = reconcileMs('everyMs', given.everyMs, 15 * MINUTE, MINUTE, DAY);
  const windowMs = reconcileMs('windowMs', given.windowMs, 2 * everyMs, everyMs + RECONCILE_GRACE_MS, 31 * DAY);
  const apps = given.apps;
  if (apps !== undefined && (!Array.isArray(apps) || apps.some((app) => typeof app !== 'string' || app === '')))
    throw new TypeError('reconcile.apps must be a list of app names');
  if (given.record !== undefined && typeof given.record !== 'boolean') throw new TypeError('reconcile.record must be true or false');
  return {
    client: client as RackClient,
    everyMs,
    windowMs,
    apps: apps === undefined || apps.length === 0 ? undefined : [...apps],
    record: given.record === true,
    expiryWarningMs: reconcileMs('expiryWarningMs', given.expiryWarningMs, 7 * DAY, 0, 365 * DAY),
    keepOpenMs: reconcileMs('keepOpenMs', given.keepOpenMs, 7 * DAY, windowMs, 365 * DAY),
  };
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
export function resolveWatchOptions(options: WatchOptions | undefined, clock: Clock) {
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
    now: given.now ?? ((): Date => clock.date()),
    reconcile,
  };
}
