/**
 * `stats --history`: each measure as a text sparkline with its total and peak, then (for a day)
 * one line per hour. ASCII table, one sparkline of block characters a terminal shows as bars.
 */
import type { HistoryHour, InboxHistory } from '../../../inbox/facade/index.js';
import { formatAge } from '../../format.js';

const BLOCKS = ['\u2581', '\u2582', '\u2583', '\u2584', '\u2585', '\u2586', '\u2587', '\u2588'];
/** A week is 168 hours: summed by 6 hours, its sparkline fits a terminal (28 characters). */
const WEEK_BUCKET = 6;

/** One character a value: `.` for none, the height of the block for the rest (relative to the peak). */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values
    .map((value) => (value <= 0 ? '.' : BLOCKS[Math.min(BLOCKS.length - 1, Math.ceil((value / max) * BLOCKS.length) - 1)]!))
    .join('');
}

function buckets(values: readonly number[], size: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size).reduce((sum, value) => sum + value, 0));
  return out;
}

const ms = (value: number | null): string => (value === null ? '-' : formatAge(value));

export function historyLines(history: InboxHistory): string[] {
  const { hours } = history;
  const size = history.span === 'week' ? WEEK_BUCKET : 1;
  const first = hours[0]?.hour ?? '';
  const measures: Array<[string, (hour: HistoryHour) => number | null]> = [
    ['accepted', (hour) => hour.accepted],
    ['duplicate', (hour) => hour.duplicate],
    ['refused', (hour) => hour.refused],
    ['retried', (hour) => hour.retried],
    ['dead', (hour) => hour.dead],
    ['processed', (hour) => hour.processed],
  ];
  const lines = [
    `per hour over the last ${history.span} (UTC, from ${first.slice(0, 13)}:00Z; one character ${size === 1 ? 'an hour' : `${size} hours`}):`,
  ];
  for (const [name, read] of measures) {
    const values = hours.map(read);
    if (values.every((value) => value === null)) {
      lines.push(`  ${name.padEnd(9)}  n/a (no refusals table in this schema)`);
      continue;
    }
    const counts = values.map((value) => value ?? 0);
    const total = counts.reduce((sum, value) => sum + value, 0);
    lines.push(`  ${name.padEnd(9)}  ${sparkline(buckets(counts, size))}  total ${total}, peak ${Math.max(0, ...counts)} in an hour`);
  }
  const p95s = hours.map((hour) => hour.p95Ms).filter((value): value is number => value !== null);
  lines.push(`  stored to processed: worst hour's p95 ${p95s.length === 0 ? '-' : ms(Math.max(...p95s))}`);
  lines.push(`  live workers: ${history.liveWorkers === null ? 'n/a (no workers table in this schema)' : history.liveWorkers}`);
  if (history.span === 'day') {
    lines.push('hour (UTC)         accepted  duplicate  refused  retried  dead  p50 wait  p95 wait');
    for (const hour of hours) {
      lines.push(
        [
          `${hour.hour.slice(0, 10)} ${hour.hour.slice(11, 16)}Z`.padEnd(17),
          String(hour.accepted).padStart(9),
          String(hour.duplicate).padStart(10),
          (hour.refused === null ? 'n/a' : String(hour.refused)).padStart(8),
          String(hour.retried).padStart(8),
          String(hour.dead).padStart(5),
          ms(hour.p50Ms).padStart(9),
          ms(hour.p95Ms).padStart(9),
        ].join(' '),
      );
    }
  }
  return lines;
}
