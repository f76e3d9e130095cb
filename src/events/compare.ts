import type { AnyWebhookEvent } from './types.js';

const RFC3339 = /^((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2}))(?:\.(\d{1,9}))?(Z|[+-](\d{2}):(\d{2}))$/i;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/**
 * Nanoseconds since the epoch of an RFC 3339 timestamp, exactly (racks send up to 9 fractional
 * digits, which `Date.parse` rounds to milliseconds). `undefined` when it is not RFC 3339,
 * including dates `Date.parse` would roll over (`2026-02-30`, `24:00:00`).
 */
export function timestampNanos(timestamp: string): bigint | undefined {
  const match = RFC3339.exec(timestamp);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(2, 8).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return undefined;
  if (match[10] !== undefined && (Number(match[10]) > 23 || Number(match[11]) > 59)) return undefined;
  const millis = Date.parse(`${match[1]}${match[9]}`);
  if (Number.isNaN(millis)) return undefined;
  return BigInt(millis) * 1_000_000n + BigInt((match[8] ?? '').padEnd(9, '0'));
}

function tickId(event: AnyWebhookEvent): string {
  const value = (event.data as Record<string, unknown>)['tick_id'];
  return typeof value === 'string' ? value : '';
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function tieBreaker(event: AnyWebhookEvent): string {
  const data = event.data as Record<string, unknown>;
  const keys = Object.keys(data).sort();
  try {
    return JSON.stringify(keys.map((key) => [key, data[key]]));
  } catch {
    // Data nested too deep for the stack (JSON.parse takes far deeper input than stringify can
    // write back), or a value JSON cannot hold: such events tie on data, and a sort keeps their order.
    return '';
  }
}

/**
 * Orders events by `timestamp` exactly (nanoseconds, time zones honoured), as the spec tells
 * receivers to. Ties are broken deterministically by action, then `tick_id`, then the data;
 * events with an unparseable timestamp sort last. Use with `events.sort(compareEvents)`.
 */
export function compareEvents(a: AnyWebhookEvent, b: AnyWebhookEvent): number {
  const ta = timestampNanos(a.timestamp);
  const tb = timestampNanos(b.timestamp);
  if (ta !== undefined && tb !== undefined && ta !== tb) return ta < tb ? -1 : 1;
  if (ta === undefined && tb !== undefined) return 1;
  if (tb === undefined && ta !== undefined) return -1;
  if (ta === undefined && tb === undefined && a.timestamp !== b.timestamp) return compareText(a.timestamp, b.timestamp);
  return (
    compareText(a.action, b.action) ||
    compareText(tickId(a), tickId(b)) ||
    compareText(tieBreaker(a), tieBreaker(b))
  );
}
