import type { AnyWebhookEvent } from '../events/types.js';

/**
 * "The same event", as the receiver's dedup applies it (memory store, Redis and inbox alike):
 *
 * - Two deliveries with the same body bytes are copies, whatever their signature's `t` (a proxy
 *   re-sending, or the rack dispatching one marshalled body to the same URL twice).
 * - Two deliveries with different bytes are the same event only when both carry a `tick_id` and
 *   they differ in nothing but time: the envelope `timestamp`, and `data` fields named
 *   `timestamp` or ending in `_at`. The action, the status, the `tick_id` and every other `data`
 *   field (unknown ones included) must be equal.
 *
 * Why only with a `tick_id`: an event without one is a fresh occurrence each time (a scale
 * override toggled on, off and on again sends two "on" events that differ only in time), and its
 * nanosecond `timestamp` makes every dispatch's bytes unique. A tick's events are tied to one
 * reconciler tick, so a time-only difference there is the rack sending the same fact again; a
 * difference in anything else (a deployed rack reuses one `tick_id` for two `:failed` events with
 * different `failed_services`) is a different fact, and both reach the handlers.
 */
export function isTimeField(name: string): boolean {
  return name === 'timestamp' || name.endsWith('_at');
}

/** A JSON value with object keys sorted, so that key order never makes two events differ. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(',')}}`;
}

/**
 * What an event says apart from time, as one string: equal strings mean the same event (for events
 * that carry a `tick_id`). Values are compared as parsed: integer fields as numbers.
 */
export function eventContent(event: AnyWebhookEvent): string {
  const data = event.data as Record<string, unknown>;
  const kept = Object.keys(data)
    .filter((key) => !isTimeField(key))
    .sort();
  const fields = kept.map((key) => `${JSON.stringify(key)}:${canonical(data[key])}`).join(',');
  return `{"action":${JSON.stringify(event.action)},"status":${canonical(event.status)},"data":{${fields}}}`;
}

/** The event's `tick_id` when it has a non-empty one. */
export function tickIdOf(event: AnyWebhookEvent): string | undefined {
  const tickId = (event.data as Record<string, unknown>)['tick_id'];
  return typeof tickId === 'string' && tickId !== '' ? tickId : undefined;
}
