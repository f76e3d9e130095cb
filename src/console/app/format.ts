// Human formats for durations, skews and times. Every absolute time on the page is UTC.

import { now } from './clock.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const pad = (n: number): string => String(n).padStart(2, '0');

/** "3 min 12 s", "2 h 05 min", "4 d 3 h", "820 ms": the two largest units. */
export function duration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < SECOND) return `${Math.round(abs)} ms`;
  if (abs < MINUTE) return `${Math.floor(abs / SECOND)} s`;
  if (abs < HOUR) return `${Math.floor(abs / MINUTE)} min ${pad(Math.floor((abs % MINUTE) / SECOND))} s`;
  if (abs < DAY) return `${Math.floor(abs / HOUR)} h ${pad(Math.floor((abs % HOUR) / MINUTE))} min`;
  return `${Math.floor(abs / DAY)} d ${Math.floor((abs % DAY) / HOUR)} h`;
}

/** A countdown that changes every second: "47 min 03 s", "1 h 02 min 09 s". */
export function countdown(ms: number): string {
  const total = Math.max(0, Math.floor(ms / SECOND));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  return hours > 0 ? `${hours} h ${pad(minutes)} min ${pad(seconds)} s` : `${minutes} min ${pad(seconds)} s`;
}

/** "+0.412 s" / "-1.250 s": the sign always shown, since a negative skew is meaningful. */
export function skew(seconds: number): string {
  return `${seconds < 0 ? '\u2212' : '+'}${Math.abs(seconds).toFixed(3)} s`;
}

export function parseTime(value: string | number): number {
  return typeof value === 'number' ? value : Date.parse(value);
}

/** "2026-04-27 10:30:00Z"; with `withFraction`, the milliseconds too. */
export function utc(value: string | number, withFraction = false): string {
  const ms = parseTime(value);
  if (Number.isNaN(ms)) return String(value);
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, withFraction ? 23 : 19)}Z`;
}

/** "12 s ago", "3 min ago", "in 4 min", "just now". */
export function relative(value: string | number, reference = now()): string {
  const ms = parseTime(value);
  if (Number.isNaN(ms)) return String(value);
  const delta = reference - ms;
  if (Math.abs(delta) < 5 * SECOND) return 'just now';
  const text = Math.abs(delta) < MINUTE ? `${Math.floor(Math.abs(delta) / SECOND)} s` : duration(delta).replace(/ \d+ (s|min|h)$/, '');
  return delta > 0 ? `${text} ago` : `in ${text}`;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}\u2026`;
}
