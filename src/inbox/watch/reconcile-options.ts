import type { RackClient } from '../../rack-api/client.js';
import type { WatchReconcileOptions } from './types.js';
import { wholeNumber } from '../whole-number.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** reconcile()'s grace period: proofs this recent are not judged yet, so a window must reach past it. */
const RECONCILE_GRACE_MS = MINUTE;

export interface ResolvedReconcile {
  readonly client: RackClient;
  readonly everyMs: number;
  readonly windowMs: number;
  readonly apps: readonly string[] | undefined;
  readonly record: boolean;
  readonly expiryWarningMs: number;
  readonly keepOpenMs: number;
}

const bounded = (name: string, value: unknown, fallback: number, min: number, max: number) =>
  wholeNumber(`reconcile.${name}`, value, fallback, min, max, ' of ms');

/** Checks the `reconcile` option of inbox.watch(); throws a `TypeError` or `RangeError` naming what is wrong. */
export function resolveReconcile(given: WatchReconcileOptions | undefined): ResolvedReconcile | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== 'object' || given === null)
    throw new TypeError('reconcile must be an object such as { client: createRackClient({ url, token }) }');
  const client = given.client as Partial<RackClient> | undefined;
  if (typeof client !== 'object' || client === null || typeof client.apps !== 'function' || typeof client.baseUrl !== 'string')
    throw new TypeError('reconcile.client must be a client of the rack API, from createRackClient({ url, token })');
  const everyMs = bounded('everyMs', given.everyMs, 15 * MINUTE, MINUTE, DAY);
  const windowMs = bounded('windowMs', given.windowMs, 2 * everyMs, everyMs + RECONCILE_GRACE_MS, 31 * DAY);
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
    expiryWarningMs: bounded('expiryWarningMs', given.expiryWarningMs, 7 * DAY, 0, 365 * DAY),
    keepOpenMs: bounded('keepOpenMs', given.keepOpenMs, 7 * DAY, windowMs, 365 * DAY),
  };
}
