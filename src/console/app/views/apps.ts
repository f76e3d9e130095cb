// Every app the inbox has events for, with where its auto-shutdown stands.

import { getJson } from '../api.js';
import { byAttention } from '../attention.js';
import { h, keepFocus, replaceChildren } from '../dom.js';
import { href } from '../router.js';
import type { AppSummary } from '../types.js';
import { appName, breakerBadge, clearError, countdownEl, phaseBadge, showError, table, timeAgo } from '../ui.js';
import type { View } from './view.js';

/** Dead, failing and pending deliveries as links to them; a dash when nothing waits. */
function needs(app: AppSummary): HTMLElement | string {
  const parts = (
    [
      ['dead', app.dead, { app: app.app, state: 'dead' }],
      ['failing', app.failing, { app: app.app, state: 'pending' }],
      ['pending', app.pending, { app: app.app, state: 'pending' }],
    ] as const
  ).filter(([, count]) => count > 0);
  if (parts.length === 0) return h('span', { class: 'muted' }, '\u2014');
  return h(
    'span',
    { class: 'needs' },
    parts.map(([word, count, filter]) =>
      h('a', { href: href.deliveries(filter), class: `badge needs-${word}`, 'data-key': `needs-${app.app}-${word}` }, `${count} ${word}`),
    ),
  );
}

function appRow(app: AppSummary): HTMLTableRowElement {
  const armed = app.phase === 'armed' && app.expectedShutdownAt !== undefined;
  return h(
    'tr',
    { 'data-testid': 'app-row', 'data-app': app.app },
    h('td', undefined, h('a', { href: href.app(app.app), class: 'mono', 'data-key': `app-${app.app}` }, appName(app.app))),
    h('td', undefined, h('span', { class: 'phase-cell' }, phaseBadge(app.phase), armed ? countdownEl(app.expectedShutdownAt!) : null)),
    h('td', undefined, breakerBadge(app.breaker)),
    h('td', { 'data-testid': 'app-needs' }, needs(app)),
    h(
      'td',
      { class: 'num mono' },
      app.anomalies > 0
        ? h('span', { class: 'badge anomaly-count', title: 'events the spec says cannot happen' }, String(app.anomalies))
        : '0',
    ),
    h('td', { class: 'num mono' }, String(app.events)),
    h('td', { class: 'nowrap' }, timeAgo(app.updatedAt)),
  );
}

export function appsView(): View {
  const body = h('tbody');
  const summary = h('p', { class: 'summary' });
  const element = h(
    'section',
    { class: 'view' },
    h('h1', { tabindex: '-1' }, 'Apps'),
    summary,
    table(['App', 'Auto-shutdown', 'Breaker', 'Needs', ['Anomalies', 'num'], ['Events', 'num'], 'Last event'], body, {
      class: 'apps',
      'aria-label': 'Apps',
    }),
  );
  let shown = '';

  async function refresh(): Promise<void> {
    try {
      const { apps } = await getJson<{ apps: AppSummary[] }>('/api/apps');
      clearError();
      const text = JSON.stringify(apps);
      if (text === shown) return;
      shown = text;
      const sorted = [...apps].sort(byAttention);
      keepFocus(body, () =>
        replaceChildren(
          body,
          sorted.length === 0
            ? h('tr', { class: 'empty' }, h('td', { colspan: 7 }, 'No app has sent lifecycle events yet.'))
            : sorted.map(appRow),
        ),
      );
      const armed = apps.filter((app) => app.phase === 'armed').length;
      summary.textContent = `${apps.length} ${apps.length === 1 ? 'app' : 'apps'}${armed > 0 ? `, ${armed} with an auto-shutdown armed` : ''}. Sorted by what needs attention: dead, failing, pending, then the latest event.`;
    } catch (error) {
      showError(error);
    }
  }

  return { element, refresh };
}
