// An app's lifecycle as a picture: one lane per kind of event, the auto-shutdown phases as bands
// behind their lane, a UTC time axis, and every event a mark that links to its delivery.

import { s } from './dom.js';
import { plural, utc } from './format.js';
import { href } from './router.js';
import { LANES, type Lane, type PhaseSpan, type TimelineEvent } from './types.js';

export interface TimelineInput {
  app: string;
  events: readonly TimelineEvent[];
  phases: readonly PhaseSpan[];
  nowMs: number;
  /** While armed: when the shutdown is due, drawn as a marker. */
  expectedShutdownMs?: number;
  /** How much time to show, ending at now (or the last event); Infinity: everything. */
  spanMs: number;
  width: number;
}

const LEFT = 112;
const RIGHT = 16;
const LABEL_ROW = 14; // a row above the lanes for each marker label ("now", "shutdown due")
const AXIS = 40;
const CHAR = 6.2; // width of a character at 10.5 px: an estimate good enough to keep labels apart
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const STEPS = [
  SECOND,
  5 * SECOND,
  15 * SECOND,
  30 * SECOND,
  MINUTE,
  5 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  30 * DAY,
];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

interface LaneBox {
  lane: Lane;
  top: number;
  height: number;
  /** The marks' centre line. */
  cy: number;
}

function domain(input: TimelineInput): [number, number] {
  const times = [...input.events.map((e) => e.timeMs), ...input.phases.filter((p) => p.phase !== 'idle').map((p) => p.fromMs)];
  const last = times.length === 0 ? input.nowMs : Math.max(...times);
  const reach = Math.max(last - Math.min(...times, last), 10 * MINUTE);
  // "Now" and a due shutdown belong in the picture unless they would squash the events into a corner.
  let end = last;
  for (const extra of [input.nowMs, input.expectedShutdownMs])
    if (extra !== undefined && extra > end && (extra - end <= reach || Number.isFinite(input.spanMs))) end = extra;
  const start = Number.isFinite(input.spanMs) ? end - input.spanMs : Math.min(...times, end) - reach * 0.03;
  return [start, end + (end - start) * 0.02];
}

function tickStep(span: number, width: number): number {
  const most = Math.max(2, Math.floor(width / 90));
  return STEPS.find((step) => span / step <= most) ?? STEPS[STEPS.length - 1]!;
}

function tickLabel(ms: number, step: number, first: boolean): [string, string] {
  const iso = new Date(ms).toISOString();
  const date = new Date(ms);
  const day = `${MONTHS[date.getUTCMonth()]} ${date.getUTCDate()}`;
  if (step >= DAY) return [day, ''];
  return [step < MINUTE ? iso.slice(11, 19) : iso.slice(11, 16), first || iso.slice(11, 19) === '00:00:00' ? day : ''];
}

export function timelineSvg(input: TimelineInput): SVGSVGElement {
  const [start, end] = domain(input);
  const events = input.events.filter((e) => e.timeMs >= start && e.timeMs <= end);
  const hasPhases = input.phases.some((p) => p.phase !== 'idle');
  const due =
    input.expectedShutdownMs !== undefined && input.expectedShutdownMs >= start && input.expectedShutdownMs <= end
      ? input.expectedShutdownMs
      : undefined;
  const lanesTop = 10 + LABEL_ROW * (due === undefined ? 1 : 2);
  const lanes: LaneBox[] = [];
  let y = lanesTop;
  for (const lane of LANES) {
    if (!input.events.some((e) => e.lane === lane) && !(lane === 'auto-shutdown' && hasPhases)) continue;
    const height = lane === 'auto-shutdown' ? 72 : 52;
    lanes.push({ lane, top: y, height, cy: y + (lane === 'auto-shutdown' ? 32 : 26) });
    y += height;
  }
  // Never wider than its box (the box clips): a phone's 390 px leaves about 330 for the picture.
  const width = Math.max(input.width, 240);
  const plotRight = width - RIGHT;
  const axisY = y;
  const height = axisY + AXIS;
  const x = (ms: number): number => LEFT + ((ms - start) / (end - start)) * (plotRight - LEFT);
  const boxOf = (lane: Lane): LaneBox | undefined => lanes.find((box) => box.lane === lane);
  const anomalies = events.filter((e) => e.anomaly).length;
  const label =
    events.length === 0
      ? `${input.app}: no lifecycle events in this span`
      : `${input.app} lifecycle timeline, ${utc(start)} to ${utc(end)}: ${plural(events.length, 'event')}, ${anomalies} marked as ${anomalies === 1 ? 'an anomaly' : 'anomalies'}`;

  const svg = s('svg', {
    'data-testid': 'timeline',
    role: 'img',
    'aria-label': label,
    class: 'timeline',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
  });

  // The axis first, so everything else is drawn over its grid lines.
  const step = tickStep(end - start, plotRight - LEFT);
  const axis = s(
    'g',
    { class: 'tl-axis' },
    s('line', { x1: LEFT, x2: plotRight, y1: axisY, y2: axisY }),
    s('text', { class: 'tl-utc', x: 12, y: axisY + 17 }, 'UTC'),
  );
  let first = true;
  for (let tick = Math.ceil(start / step) * step; tick <= end; tick += step) {
    const tx = x(tick);
    const [time, day] = tickLabel(tick, step, first);
    first = false;
    const anchor = tx > plotRight - 24 ? 'end' : 'middle';
    axis.append(
      s('line', { class: 'tl-grid', x1: tx, x2: tx, y1: lanesTop, y2: axisY }),
      s('line', { x1: tx, x2: tx, y1: axisY, y2: axisY + 5 }),
      s('text', { x: tx, y: axisY + 17, 'text-anchor': anchor }, time),
    );
    if (day !== '') axis.append(s('text', { class: 'tl-day', x: tx, y: axisY + 31, 'text-anchor': anchor }, day));
  }
  svg.append(axis);

  lanes.forEach((box, index) => {
    if (index % 2 === 1) svg.append(s('rect', { class: 'tl-stripe', x: 0, y: box.top, width, height: box.height }));
    svg.append(s('text', { class: 'tl-lane', x: 12, y: box.cy + 4 }, box.lane));
  });

  // Phase bands behind the auto-shutdown lane (idle has none); the current phase runs to the right edge.
  const auto = boxOf('auto-shutdown');
  if (auto !== undefined) {
    for (const phase of input.phases) {
      if (phase.phase === 'idle') continue;
      const from = Math.max(x(phase.fromMs), LEFT);
      const to = Math.min(phase.toMs === null ? plotRight : x(phase.toMs), plotRight);
      if (to - from < 1) continue;
      const band = s('rect', {
        class: `tl-band phase-${phase.phase}`,
        x: from,
        y: auto.top + 4,
        width: to - from,
        height: auto.height - 8,
        rx: 3,
      });
      band.append(
        s('title', undefined, `${phase.phase} from ${utc(phase.fromMs)}${phase.toMs === null ? ' (current)' : ` to ${utc(phase.toMs)}`}`),
      );
      svg.append(band);
      const text = phase.phase.replace('-', ' ').toUpperCase();
      if (to - from > text.length * 7.4 + 8)
        svg.append(s('text', { class: 'tl-band-label', x: from + 5, y: auto.top + auto.height - 10 }, text));
    }
  }

  // Now, and when an armed shutdown is due: lines with their labels in the row above the lanes.
  const marker = (ms: number | undefined, cls: string, text: string, row: number, bottom: number): void => {
    if (ms === undefined || ms < start || ms > end) return;
    const mx = x(ms);
    const textY = 10 + row * LABEL_ROW;
    const side = mx + 4 + text.length * CHAR > plotRight ? 'end' : 'start';
    svg.append(
      s('line', { class: cls, x1: mx, x2: mx, y1: textY - 9, y2: bottom }),
      s('text', { class: `${cls}-label`, x: mx + (side === 'end' ? -4 : 4), y: textY, 'text-anchor': side }, text),
    );
  };
  marker(input.nowMs, 'tl-now', 'now', 1, axisY);
  if (auto !== undefined && due !== undefined) marker(due, 'tl-due', 'shutdown due', 2, auto.top + auto.height);

  // The marks, in time order so Tab walks the history; a label above each, or below, where there is room.
  const rightEdge = new Map<string, number>();
  for (const event of events) {
    const box = boxOf(event.lane);
    if (box === undefined) continue;
    const mx = x(event.timeMs);
    const link = s('a', {
      href: href.delivery(event.id),
      class: `tl-mark lane-${event.lane}`,
      'data-testid': 'timeline-event',
      'data-id': event.id,
      'data-state': event.state,
    });
    link.append(
      s('title', undefined, `${event.action} \u00b7 ${event.time} \u00b7 ${event.state}${event.anomaly ? ' \u00b7 anomaly' : ''}`),
      s('circle', { class: 'tl-focus', cx: mx, cy: box.cy, r: 12 }),
      s('circle', { class: 'tl-dot', cx: mx, cy: box.cy, r: 5.5 }),
    );
    if (event.anomaly) link.append(s('circle', { class: 'tl-anomaly', 'data-testid': 'timeline-anomaly', cx: mx, cy: box.cy, r: 9.5 }));
    svg.append(link);
    const textWidth = event.label.length * CHAR;
    const left = Math.min(Math.max(mx - textWidth / 2, LEFT), plotRight - textWidth);
    for (const [row, dy] of [
      ['above', -13],
      ['below', 21],
    ] as const) {
      const key = `${event.lane}:${row}`;
      if (left <= (rightEdge.get(key) ?? -Infinity) + 6) continue;
      svg.append(s('text', { class: `tl-label${event.anomaly ? ' tl-label-anomaly' : ''}`, x: left, y: box.cy + dy }, event.label));
      rightEdge.set(key, left + textWidth);
      break;
    }
  }
  return svg;
}
