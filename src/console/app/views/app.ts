// One app: its folded state, its lifecycle timeline and the anomalies found in it.

import { ApiError, getJson } from '../api.js';
import { syncClock, now } from '../clock.js';
import { h, keepFocus, replaceChildren } from '../dom.js';
import { plural } from '../format.js';
import { href } from '../router.js';
import { timelineSvg } from '../timeline-svg.js';
import type { Anomaly, AppResponse } from '../types.js';
import { clearError, detailSection, showError } from '../ui.js';
import { autoShutdownCard, breakerBudgetCard, buildReleaseCard, overridesCard, promotesCard } from './app-state.js';
import type { View } from './view.js';

function anomalyItem(anomaly: Anomaly): HTMLLIElement {
  return h(
    'li',
    { 'data-testid': 'anomaly', class: 'anomaly' },
    h('span', { class: 'badge anomaly-kind mono' }, anomaly.kind),
    h('span', { class: 'anomaly-message' }, anomaly.message),
    h(
      'span',
      { class: 'anomaly-links' },
      anomaly.deliveryIds.map((id) =>
        h('a', { href: href.delivery(id), class: 'mono', 'data-key': `anomaly-${anomaly.id}-${id}` }, `#${id}`),
      ),
    ),
  );
}

const LEGEND: ReadonlyArray<readonly [string, string]> = [
  ['phase-armed', 'armed'],
  ['phase-shut-down', 'shut down'],
  ['phase-shutdown-failed', 'shutdown failed'],
  ['phase-restored', 'restored'],
];

function legend(): HTMLElement {
  return h(
    'ul',
    { class: 'legend', 'aria-label': 'Legend' },
    LEGEND.map(([cls, text]) => h('li', undefined, h('span', { class: `swatch tl-band ${cls}`, 'aria-hidden': 'true' }), text)),
    h('li', undefined, h('span', { class: 'swatch swatch-anomaly', 'aria-hidden': 'true' }), 'anomaly'),
    h('li', undefined, h('span', { class: 'swatch swatch-now', 'aria-hidden': 'true' }), 'now'),
    h('li', { class: 'muted' }, 'Select a mark to open its delivery.'),
  );
}

const SPANS: ReadonlyArray<readonly [string, number]> = [
  ['1 h', 3_600_000],
  ['6 h', 6 * 3_600_000],
  ['24 h', 24 * 3_600_000],
  ['7 d', 7 * 24 * 3_600_000],
  ['all', Number.POSITIVE_INFINITY],
];

export function appView(name: string): View {
  const heading = h('h1', { tabindex: '-1', class: 'mono break' }, name);
  const content = h('div', { class: 'app-detail' });
  const element = detailSection(href.apps(), 'Apps', heading, content);
  const timelineBox = h('div', { class: 'timeline-box' });
  let data: AppResponse | undefined;
  let shown = '';
  let drawnWidth = 0;
  let spanMs = Number.POSITIVE_INFINITY;
  const spanButtons = SPANS.map(([text, ms]) => {
    const button = h('button', { type: 'button', class: 'seg', 'aria-pressed': String(ms === spanMs), 'data-key': `span-${text}` }, text);
    button.addEventListener('click', () => {
      spanMs = ms;
      for (const other of spanButtons) other.setAttribute('aria-pressed', String(other === button));
      drawnWidth = 0;
      drawTimeline();
    });
    return button;
  });
  const spanGroup = h(
    'div',
    { class: 'segmented', role: 'group', 'aria-label': 'Time span shown' },
    h('span', { class: 'muted small' }, 'Span'),
    spanButtons,
  );

  const drawTimeline = (): void => {
    if (data === undefined) return;
    const width = Math.floor(timelineBox.clientWidth);
    if (width === 0 || (width === drawnWidth && timelineBox.firstChild !== null)) return;
    drawnWidth = width;
    const auto = data.app.autoShutdown;
    const due = auto.phase === 'armed' && auto.expectedShutdownAt !== undefined ? Date.parse(auto.expectedShutdownAt) : Number.NaN;
    const focusedId = (document.activeElement as Element | null)?.closest('[data-testid="timeline-event"]')?.getAttribute('data-id');
    timelineBox.replaceChildren(
      timelineSvg({
        app: name,
        events: data.timeline,
        phases: data.phases,
        nowMs: now(),
        spanMs,
        width,
        ...(Number.isNaN(due) ? {} : { expectedShutdownMs: due }),
      }),
    );
    if (focusedId !== null && focusedId !== undefined)
      timelineBox.querySelector<SVGAElement>(`[data-id="${CSS.escape(focusedId)}"]`)?.focus();
  };
  const resize = new ResizeObserver(() => requestAnimationFrame(drawTimeline));
  resize.observe(timelineBox);

  function render(response: AppResponse): void {
    const app = response.app;
    replaceChildren(
      content,
      h('div', { class: 'grid-3' }, autoShutdownCard(app), breakerBudgetCard(app), buildReleaseCard(app)),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'timeline-title' },
        h(
          'div',
          { class: 'card-head' },
          h(
            'h2',
            { id: 'timeline-title' },
            'Timeline ',
            h('span', { class: 'muted small' }, `${plural(response.timeline.length, 'event')}, times in UTC`),
          ),
          spanGroup,
        ),
        timelineBox,
        legend(),
      ),
      h(
        'section',
        { class: `card${response.anomalies.length > 0 ? ' card-alert' : ''}`, 'aria-labelledby': 'anomalies-title' },
        h('h2', { id: 'anomalies-title' }, `Anomalies (${response.anomalies.length})`),
        response.anomalies.length === 0
          ? h('p', { class: 'muted' }, 'None: every lifecycle sequence is one the spec allows.')
          : h('ul', { class: 'anomalies' }, response.anomalies.map(anomalyItem)),
      ),
      h('div', { class: 'grid-2' }, promotesCard(app), overridesCard(app)),
    );
    drawnWidth = 0;
    drawTimeline();
  }

  async function refresh(): Promise<void> {
    try {
      const response = await getJson<AppResponse>(`/api/app?name=${encodeURIComponent(name)}`);
      syncClock(response.now);
      clearError();
      const { now: _ignored, ...rest } = response;
      const text = JSON.stringify(rest);
      if (text === shown) {
        drawnWidth = 0; // same data, but "now" moved on
        drawTimeline();
        return;
      }
      shown = text;
      data = response;
      keepFocus(content, () => render(response));
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found')
        replaceChildren(content, h('p', { class: 'empty-state' }, `No app ${name} in this inbox.`));
      showError(error);
    }
  }

  return { element, refresh, dispose: () => resize.disconnect() };
}
