/**
 * An event's natural key (rack-api.md section 4 rule 8), as a delivery rebuilt from the rack's API
 * (`inbox reconcile --record`) and the real delivery of the same event both give it, so that a late
 * real arrival is stored as the reconstructed row's duplicate instead of running the handlers twice.
 *
 * - `build:create`, `release:create`: `(action, app, id)`; ids compared in upper case (the rack's
 *   lookups accept either case).
 * - The auto-shutdown lifecycle events a reconcile can prove: `(action, app, tick_id, time)`, the
 *   time being the event's field that equals its `…NotificationFiredAt` stamp. One `tick_id` can
 *   carry two distinct `:failed` events (a tick failure, then a failed restore during a budget
 *   reset, with a later `failed_at`): the time keeps them apart, so no two distinct events of the
 *   rack ever share a key.
 *
 * Every other event has none: a reconcile does not record it, and nothing is matched on it.
 */
const SHUTDOWN_PREFIX = 'app:budget:auto-shutdown:';

/** Per lifecycle step: the `data` field that carries the time its stamp holds (rack-api.md 3.1). */
export const LIFECYCLE_TIME_FIELDS: ReadonlyMap<string, string> = new Map([
  ['armed', 'scheduled_at'],
  ['fired', 'shutdown_at'],
  ['failed', 'failed_at'],
  ['expired', 'expired_at'],
  ['restored', 'recovery_at'],
]);

const RFC3339_UTC = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/;

/** RFC 3339 UTC with the fraction's trailing zeros dropped (as the rack writes it); `undefined` for anything else. */
function canonicalTime(value: string): string | undefined {
  const match = RFC3339_UTC.exec(value);
  if (match === null) return undefined;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  return `${match[1]}${fraction === '' ? '' : `.${fraction}`}Z`;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The natural key of an event with this action and `data`, or `undefined` when it has none. */
export function naturalKey(action: string, data: Readonly<Record<string, unknown>>): string | undefined {
  const app = text(data['app']);
  if (app === undefined) return undefined;
  if (action === 'build:create' || action === 'release:create') {
    const id = text(data['id']);
    return id === undefined ? undefined : JSON.stringify([action, app, id.toUpperCase()]);
  }
  if (!action.startsWith(SHUTDOWN_PREFIX)) return undefined;
  const field = LIFECYCLE_TIME_FIELDS.get(action.slice(SHUTDOWN_PREFIX.length));
  const tick = text(data['tick_id']);
  const time = field === undefined ? undefined : text(data[field]);
  const canonical = time === undefined ? undefined : canonicalTime(time);
  return tick === undefined || canonical === undefined ? undefined : JSON.stringify([action, app, tick, canonical]);
}
