/**
 * The sample events were written on one day in April 2026. A test event sent today with those
 * times inside (`expected_shutdown_at` seven months back) makes `inbox.watch()` raise a false
 * `overdue_lifecycle` alert, and any receiver that compares times misbehaves. So every time in a
 * sample's `data` is moved by the same amount, keeping the lifecycle's spacing (armed, then the
 * shutdown an hour later), so that the moment the event reports is its envelope `timestamp`.
 */

/** For each action with times in its data, the field holding the moment the event reports. */
const EVENT_MOMENT: { readonly [action: string]: string } = {
  'app:budget:set': 'set_at',
  'app:budget:reset': 'reset_at',
  'app:budget:clear': 'cleared_at',
  'app:budget:breaker-cleared': 'cleared_at',
  'app:budget:auto-shutdown:armed': 'scheduled_at',
  'app:budget:auto-shutdown:fired': 'shutdown_at',
  'app:budget:auto-shutdown:cancelled': 'cancelled_at',
  'app:budget:auto-shutdown:restored': 'recovery_at',
  'app:budget:auto-shutdown:expired': 'expired_at',
  'app:budget:auto-shutdown:flap-suppressed': 'suppressed_at',
  'app:budget:auto-shutdown:noop': 'evaluated_at',
  'app:budget:auto-shutdown:failed': 'failed_at',
  'app:budget:auto-shutdown:simulated': 'simulated_at',
  'app:budget:auto-shutdown:dismissed': 'dismissed_at',
};

/** An RFC 3339 UTC time anywhere in a value: a field, a `tick_id`, JSON inside a field. */
const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;
/** A month label (`2026-05`), as `expired` carries for the months it spans. */
const MONTH = /^(\d{4})-(\d{2})$/;

/** The field of `action`'s data that holds the moment it reports, when it has one. */
export function eventMomentField(action: string): string | undefined {
  return Object.hasOwn(EVENT_MOMENT, action) ? EVENT_MOMENT[action] : undefined;
}

function monthIndex(date: Date): number {
  return date.getUTCFullYear() * 12 + date.getUTCMonth();
}

/**
 * The sample's data with every time moved so that its event moment falls on `eventTime` (whole
 * seconds, as racks write these fields), and month labels moved by as many months as that moment.
 */
export function dataAt(action: string, data: { readonly [field: string]: string }, eventTime: Date): Record<string, string> {
  const field = eventMomentField(action);
  const anchor = field === undefined ? Number.NaN : Date.parse(data[field] ?? '');
  if (Number.isNaN(anchor) || Number.isNaN(eventTime.getTime())) return { ...data };
  const target = Math.floor(eventTime.getTime() / 1000) * 1000;
  const shift = target - anchor;
  const months = monthIndex(new Date(target)) - monthIndex(new Date(anchor));
  const moveTime = (time: string) => `${new Date(Date.parse(time) + shift).toISOString().slice(0, 19)}Z`;
  const moved: Record<string, string> = {};
  for (const [name, value] of Object.entries(data)) {
    const month = MONTH.exec(value);
    if (month !== null) {
      const index = Number(month[1]) * 12 + Number(month[2]) - 1 + months;
      moved[name] = `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}`;
    } else {
      moved[name] = value.replace(TIME, moveTime);
    }
  }
  return moved;
}
