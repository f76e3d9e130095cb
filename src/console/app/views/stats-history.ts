// The stats view's history: per hour over the last day or week, as small charts, and how many
// workers are live to run what they show.

import { getJson } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { countChart, latencyChart, MEASURES } from '../history-chart.js';
import type { HistoryResponse } from '../types.js';
import { showError } from '../ui.js';

type Span = 'day' | 'week';
/** The history changes by the hour: a live update refetches it at most this often. */
const REFETCH_MS = 30_000;

export function historySection(): { element: HTMLElement; refresh: () => Promise<void> } {
  let span: Span = 'day';
  let fetchedAt = 0;
  let fetchedSpan: Span | undefined;
  const charts = h('div', { class: 'chart-grid', 'data-testid': 'history' });
  const buttons = (['day', 'week'] as const).map((value) => {
    const button = h(
      'button',
      { type: 'button', class: 'seg', 'aria-pressed': String(value === span), 'data-key': `history-${value}` },
      value === 'day' ? 'Last day' : 'Last week',
    );
    button.addEventListener('click', () => {
      span = value;
      for (const other of buttons) other.setAttribute('aria-pressed', String(other === button));
      void refresh();
    });
    return button;
  });
  const workersLine = h('p', { class: 'small', 'data-testid': 'live-workers' });
  const element = h(
    'section',
    { class: 'card', 'aria-labelledby': 'history-title' },
    h(
      'div',
      { class: 'card-head' },
      h('h2', { id: 'history-title' }, 'Per hour ', h('span', { class: 'muted small' }, 'times in UTC')),
      h('div', { class: 'segmented', role: 'group', 'aria-label': 'History span' }, buttons),
    ),
    charts,
    workersLine,
  );

  async function refresh(): Promise<void> {
    if (fetchedSpan === span && Date.now() - fetchedAt < REFETCH_MS) return;
    try {
      const history = await getJson<HistoryResponse>(`/api/history?span=${span}`);
      fetchedAt = Date.now();
      fetchedSpan = history.span;
      workersLine.textContent =
        history.liveWorkers === null
          ? 'Live workers: n/a (this schema records no worker heartbeats).'
          : history.liveWorkers === 0
            ? 'Live workers: none. Nothing runs pending deliveries, retried ones included, until a worker starts.'
            : `Live workers: ${history.liveWorkers}.`;
      replaceChildren(charts, [
        ...MEASURES.map(([measure, label]) => countChart(measure, label, history.hours)),
        latencyChart(history.hours),
      ]);
    } catch (error) {
      showError(error);
    }
  }

  return { element, refresh };
}
