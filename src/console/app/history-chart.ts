// Small hourly charts for the stats view: one bar per hour, the hour and its value on hover, the
// total and the peak in words for screen readers. Plain SVG, sized by its box.

import { s, h } from './dom.js';
import { duration } from './format.js';
import type { HistoryHour } from './types.js';

const HEIGHT = 64;
const PAD_TOP = 4;

export type Measure = 'accepted' | 'duplicate' | 'refused' | 'retried' | 'dead';

export const MEASURES: ReadonlyArray<readonly [Measure, string]> = [
  ['accepted', 'Accepted'],
  ['duplicate', 'Duplicate'],
  ['refused', 'Refused'],
  ['retried', 'Retried'],
  ['dead', 'Dead'],
];

const hourText = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 16)}Z`;

/** Bars of `values` (one per hour); `null` values are drawn as nothing. */
function bars(
  hours: readonly HistoryHour[],
  values: readonly (number | null)[],
  cls: string,
  describe: (i: number) => string,
): SVGSVGElement {
  const width = Math.max(hours.length * 4, 240);
  const max = Math.max(1, ...values.map((value) => value ?? 0));
  const step = width / hours.length;
  const svg = s('svg', {
    class: `spark ${cls}`,
    viewBox: `0 0 ${width} ${HEIGHT}`,
    preserveAspectRatio: 'none',
    width: '100%',
    height: HEIGHT,
    'aria-hidden': 'true',
  });
  svg.append(s('line', { class: 'spark-base', x1: 0, x2: width, y1: HEIGHT - 0.5, y2: HEIGHT - 0.5 }));
  values.forEach((value, index) => {
    if (value === null || value === 0) return;
    const barHeight = Math.max(1.5, ((HEIGHT - PAD_TOP) * value) / max);
    const bar = s('rect', {
      class: 'spark-bar',
      x: index * step + step * 0.1,
      y: HEIGHT - barHeight,
      width: Math.max(step * 0.8, 1),
      height: barHeight,
    });
    bar.append(s('title', undefined, describe(index)));
    svg.append(bar);
  });
  return svg;
}

/** One measure's chart with its heading: the span's total and peak hour in words. */
export function countChart(measure: Measure, label: string, hours: readonly HistoryHour[]): HTMLElement {
  const values = hours.map((hour) => hour[measure]);
  const missing = values.every((value) => value === null);
  const total = values.reduce<number>((sum, value) => sum + (value ?? 0), 0);
  const peak = values.reduce<number>((most, value) => Math.max(most, value ?? 0), 0);
  const summary = missing ? 'n/a' : String(total);
  const words = missing
    ? `${label}: n/a (this inbox records no refusals)`
    : `${label}: ${total} in ${hours.length} hours, at most ${peak} in one hour`;
  return h(
    'figure',
    { class: `chart chart-${measure}`, 'data-testid': 'history-chart', 'data-measure': measure, 'aria-label': words, role: 'img' },
    h(
      'figcaption',
      undefined,
      h('span', undefined, label),
      h('span', { class: 'mono chart-total', 'data-testid': 'chart-total' }, summary),
    ),
    missing
      ? h('p', { class: 'muted small' }, 'n/a: no refusals table in this schema')
      : bars(hours, values, `spark-${measure}`, (i) => `${hourText(hours[i]!.hour)}: ${values[i]} ${label.toLowerCase()}`),
  );
}

/** Stored to processed: the median per hour as bars, the 95th percentile in the tooltip and heading. */
export function latencyChart(hours: readonly HistoryHour[]): HTMLElement {
  const processed = hours.reduce((sum, hour) => sum + hour.processed, 0);
  const p95s = hours.map((hour) => hour.p95Ms).filter((value): value is number => value !== null);
  const worst = p95s.length === 0 ? null : Math.max(...p95s);
  const summary = worst === null ? '\u2014' : `p95 \u2264 ${duration(worst)}`;
  const words =
    worst === null
      ? 'Stored to processed: nothing processed in this span'
      : `Stored to processed: ${processed} processed, the worst hour's 95th percentile ${duration(worst)}`;
  return h(
    'figure',
    { class: 'chart chart-latency', 'data-testid': 'history-chart', 'data-measure': 'latency', 'aria-label': words, role: 'img' },
    h(
      'figcaption',
      undefined,
      h('span', undefined, 'Stored \u2192 processed (median)'),
      h('span', { class: 'mono chart-total', 'data-testid': 'chart-total' }, summary),
    ),
    bars(
      hours,
      hours.map((hour) => hour.p50Ms),
      'spark-latency',
      (i) => {
        const hour = hours[i]!;
        return `${hourText(hour.hour)}: ${hour.processed} processed, median ${duration(hour.p50Ms ?? 0)}, p95 ${duration(hour.p95Ms ?? 0)}`;
      },
    ),
  );
}
