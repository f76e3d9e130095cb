// Events the rack sent that never arrived, as inbox.watch() keeps them open: the scheduled
// reconcile's gaps (the rack's API proves the send: route, field, value), each linked to the
// delivery it was recorded as when reconcile stored it; and the log gaps (the log itself shows the
// send), each with the deliveries that imply it. A failing reconcile is said first: while it
// fails, no new gap is found.

import { getJson } from '../api.js';
import { h, keepFocus, replaceChildren } from '../dom.js';
import { plural } from '../format.js';
import { href } from '../router.js';
import type { Gaps, LogGapRow, ReconcileGapRow } from '../types.js';
import { appName, clearError, showError, table, timeAgo } from '../ui.js';
import type { View } from './view.js';

function proof({ route, field, value }: ReconcileGapRow['evidence']): HTMLElement {
  return h('span', { class: 'mono', 'data-testid': 'gap-proof' }, `GET ${route} `, h('strong', undefined, field), `=${value}`);
}

function recordedCell(gap: ReconcileGapRow): HTMLElement {
  if (gap.recorded === null)
    return h('span', { class: 'muted', title: 'not stored: run its handler by hand, or reconcile with --record' }, 'not recorded');
  return h(
    'a',
    { href: href.delivery(gap.recorded.id), class: 'mono', 'data-testid': 'gap-recorded', title: 'its handler runs and attempts' },
    `delivery ${gap.recorded.id}`,
  );
}

function reconcileRow(gap: ReconcileGapRow): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-testid': 'reconcile-gap-row', 'data-key': gap.key },
    h('td', { class: 'mono' }, gap.action, gap.status === null ? null : h('span', { class: 'muted' }, ` (${gap.status})`)),
    h('td', undefined, h('a', { href: href.app(gap.app) }, appName(gap.app))),
    h('td', { class: 'mono' }, gap.id),
    h('td', undefined, proof(gap.evidence)),
    h('td', { class: 'nowrap' }, timeAgo(gap.evidence.at === '' ? gap.since : gap.evidence.at)),
    h('td', { class: 'nowrap' }, timeAgo(gap.openedAt)),
    h('td', undefined, recordedCell(gap)),
  );
}

function logRow(gap: LogGapRow): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-testid': 'log-gap-row', 'data-key': gap.key },
    h('td', undefined, h('span', { class: `badge severity-${gap.severity}` }, gap.severity)),
    h('td', { class: 'mono' }, gap.missing),
    h('td', undefined, h('a', { href: href.app(gap.app) }, appName(gap.app))),
    h('td', { class: 'mono' }, gap.id === '' ? '""' : gap.id),
    h(
      'td',
      undefined,
      gap.evidence.map((evidence, index) => [
        index === 0 ? null : ', ',
        h('a', { href: href.delivery(evidence.deliveryId), class: 'mono', 'data-testid': 'gap-evidence' }, evidence.action),
      ]),
    ),
    h('td', { class: 'nowrap' }, timeAgo(gap.since)),
    h('td', { class: 'nowrap' }, timeAgo(gap.openedAt)),
  );
}

const empty = (columns: number, text: string) => h('tr', { class: 'empty' }, h('td', { colspan: columns }, text));

const RECONCILE_COLUMNS = ['Event', 'App', 'Id', 'Proof', 'Sent', 'First seen', 'Delivery'];
const LOG_COLUMNS = ['Severity', 'Missing', 'App', 'Id', 'Implied by', 'Since', 'First seen'];

/** One card of the view: its title, the summary line, and the table of its gaps. */
function gapCard(
  id: string,
  title: string,
  summary: HTMLElement,
  columns: string[],
  body: HTMLTableSectionElement,
  label: string,
): HTMLElement {
  return h(
    'section',
    { class: 'card', 'aria-labelledby': id },
    h('h2', { id }, title),
    summary,
    table(columns, body, { class: 'gaps', 'aria-label': label }),
  );
}

export function gapsView(): View {
  const problems = h('div', { 'data-testid': 'reconcile-problems' });
  const reconcileSummary = h('p', { class: 'summary', 'data-testid': 'reconcile-summary' });
  const reconcileBody = h('tbody');
  const logSummary = h('p', { class: 'summary', 'data-testid': 'log-summary' });
  const logBody = h('tbody');
  const element = h(
    'section',
    { class: 'view' },
    h('h1', { tabindex: '-1' }, 'Gaps'),
    h('p', { class: 'muted' }, 'Events the rack sent that this inbox never stored. The rack never sends one again.'),
    problems,
    gapCard(
      'reconcile-gaps-title',
      "Proven by the rack's API",
      reconcileSummary,
      RECONCILE_COLUMNS,
      reconcileBody,
      "Gaps the rack's API proves",
    ),
    gapCard('log-gaps-title', 'Found in the log', logSummary, LOG_COLUMNS, logBody, 'Gaps the log shows'),
  );
  let shown = '';

  async function refresh(): Promise<void> {
    try {
      const gaps = await getJson<Gaps>('/api/gaps');
      clearError();
      const text = JSON.stringify({ ...gaps, now: undefined });
      if (text === shown) return;
      shown = text;
      const reconciled = gaps.reconcile;
      replaceChildren(
        problems,
        (reconciled?.problems ?? []).map((problem) =>
          h(
            'p',
            { class: 'banner warning', role: 'status', 'data-testid': 'reconcile-problem', 'data-rule': problem.rule },
            problem.summary,
          ),
        ),
      );
      keepFocus(reconcileBody, () =>
        replaceChildren(
          reconcileBody,
          reconciled === null || reconciled.gaps.length === 0
            ? empty(7, reconciled === null ? 'No incidents table in this schema: run rack-webhooks inbox migrate.' : 'None open.')
            : reconciled.gaps.map(reconcileRow),
        ),
      );
      reconcileSummary.textContent =
        reconciled === null || reconciled.gaps.length === 0
          ? 'Found by inbox.watch({ reconcile }), which compares the inbox with the rack’s read API on a schedule.'
          : `${plural(reconciled.gaps.length, 'event', 'events')} the rack's API proves it sent, found by the scheduled reconcile.`;
      const log = gaps.logGaps;
      keepFocus(logBody, () =>
        replaceChildren(
          logBody,
          log === null || log.length === 0
            ? empty(7, log === null ? 'No incidents table in this schema: run rack-webhooks inbox migrate.' : 'None open.')
            : log.map(logRow),
        ),
      );
      logSummary.textContent =
        log === null || log.length === 0
          ? 'Found by inbox.watch(): an event other deliveries say the rack sent (a build’s release:create, a countdown’s :armed, ...).'
          : `${plural(log.length, 'event', 'events')} other deliveries say the rack sent.`;
    } catch (error) {
      showError(error);
    }
  }

  return { element, refresh };
}
