// The cards of one app's folded state: auto-shutdown, breaker, budget, overrides, promotes.

import { facts, h } from '../dom.js';
import type { AppState } from '../types.js';
import { breakerBadge, countdownEl, phaseBadge, table, timeAgo, timeUtc } from '../ui.js';

const mono = (text: string | undefined): HTMLElement | undefined =>
  text === undefined ? undefined : h('span', { class: 'mono break' }, text);
const when = (value: string | undefined): HTMLElement | string | undefined => (value === undefined ? undefined : timeAgo(value));
const card = (title: string, ...children: Array<Node | null>): HTMLElement =>
  h('section', { class: 'card' }, h('h2', undefined, title), children);

export function autoShutdownCard(app: AppState): HTMLElement {
  const auto = app.autoShutdown;
  const previous = auto.previous;
  const armed = auto.phase === 'armed' && auto.expectedShutdownAt !== undefined;
  return card(
    'Auto-shutdown',
    h('div', { class: 'phase-line' }, phaseBadge(auto.phase), armed ? countdownEl(auto.expectedShutdownAt!) : null),
    facts([
      ['Since', when(auto.since)],
      ['Scheduled', auto.scheduledAt === undefined ? undefined : timeUtc(auto.scheduledAt)],
      ['Shutdown due', auto.expectedShutdownAt === undefined ? undefined : timeUtc(auto.expectedShutdownAt)],
      ['Actor', mono(auto.actor)],
      ['Tick', mono(auto.tickId)],
      [
        'Before',
        previous === undefined
          ? undefined
          : h(
              'span',
              undefined,
              phaseBadge(previous.phase),
              ` ended by ${previous.by}${previous.cancelReason === undefined ? '' : ` (${previous.cancelReason})`} `,
              timeAgo(previous.at),
            ),
      ],
      ['Flap suppressed', auto.lastFlapSuppressed === undefined ? undefined : timeAgo(auto.lastFlapSuppressed.at)],
    ]),
  );
}

export function breakerBudgetCard(app: AppState): HTMLElement {
  const budget = app.budget;
  return card(
    'Breaker and budget',
    h(
      'div',
      { class: 'phase-line' },
      breakerBadge(app.breaker.state),
      app.breaker.by === undefined ? null : h('span', { class: 'mono muted' }, app.breaker.by),
      app.breaker.since === undefined ? null : timeAgo(app.breaker.since),
    ),
    facts([
      ['Cap', budget.capUsd === undefined ? undefined : h('span', { class: 'mono' }, `$${budget.capUsd}`)],
      ['At cap', mono(budget.atCapAction)],
      [
        'Alert at',
        budget.alertThresholdPercent === undefined ? undefined : h('span', { class: 'mono' }, `${budget.alertThresholdPercent} %`),
      ],
      [
        'Set',
        budget.setAt === undefined
          ? undefined
          : h('span', undefined, timeAgo(budget.setAt), budget.setBy === undefined ? '' : ` by ${budget.setBy}`),
      ],
      ['Last threshold', when(budget.lastThresholdAt)],
      ['Last cap', when(budget.lastCapAt)],
      ['Last reset', when(budget.lastResetAt)],
      ['Cleared', when(budget.clearedAt)],
    ]),
    // A cap, threshold or reset with no `set` seen still is a budget event (the breaker says so too).
    Object.values(budget).every((value) => value === undefined) && app.breaker.by === undefined
      ? h('p', { class: 'muted', 'data-testid': 'no-budget' }, 'No budget event seen.')
      : null,
  );
}

export function buildReleaseCard(app: AppState): HTMLElement | null {
  if (app.lastBuild === undefined && app.lastRelease === undefined) return null;
  const build = app.lastBuild;
  return card(
    'Build and release',
    facts([
      [
        'Last build',
        build === undefined
          ? undefined
          : h(
              'span',
              undefined,
              h('span', { class: 'mono' }, `${build.id ?? ''} ${build.action} ${build.status}`.trim()),
              ' ',
              timeAgo(build.at),
            ),
      ],
      ['Build message', build?.message],
      [
        'Last release',
        app.lastRelease === undefined
          ? undefined
          : h('span', undefined, h('span', { class: 'mono' }, app.lastRelease.id ?? ''), ' ', timeAgo(app.lastRelease.at)),
      ],
    ]),
  );
}

export function promotesCard(app: AppState): HTMLElement | null {
  const promotes = Object.values(app.promotes)
    .sort((a, b) => (b.startedAt ?? b.endedAt ?? '').localeCompare(a.startedAt ?? a.endedAt ?? ''))
    .slice(0, 10);
  if (promotes.length === 0) return null;
  const body = h(
    'tbody',
    undefined,
    promotes.map((p) =>
      h(
        'tr',
        undefined,
        h('td', { class: 'mono' }, p.releaseId),
        h('td', { class: 'nowrap' }, p.startedAt === undefined ? h('span', { class: 'muted' }, 'no start seen') : timeAgo(p.startedAt)),
        h('td', { class: 'mono' }, p.actor ?? ''),
        h('td', undefined, h('span', { class: `badge promote-${p.outcome ?? 'running'}` }, p.outcome ?? 'in progress')),
        h('td', { class: 'nowrap' }, p.endedAt === undefined ? '' : timeAgo(p.endedAt)),
        h('td', { class: 'muted' }, p.message ?? ''),
      ),
    ),
  );
  return card(
    'Recent promotes',
    table(['Release', 'Started', 'Actor', 'Outcome', 'Ended', 'Message'], body, { 'aria-label': 'Recent promotes' }),
  );
}

export function overridesCard(app: AppState): HTMLElement | null {
  const scale = Object.entries(app.scaleOverrides);
  const triggers = Object.entries(app.triggersOverrides);
  if (scale.length === 0 && triggers.length === 0) return null;
  const rows = [
    ...scale.map(([service, o]) =>
      h(
        'tr',
        undefined,
        h('td', { class: 'mono' }, service),
        h('td', undefined, 'scale'),
        h('td', { class: 'mono' }, o.state),
        h('td', { class: 'mono muted' }, o.actor ?? ''),
        h('td', { class: 'nowrap' }, timeAgo(o.at)),
      ),
    ),
    ...triggers.map(([service, o]) => {
      const thresholds = Object.entries(o.thresholds)
        .map(([type, value]) => `${type}=${value}`)
        .join(', ');
      return h(
        'tr',
        undefined,
        h('td', { class: 'mono' }, service),
        h('td', undefined, 'triggers'),
        h('td', { class: 'mono' }, [o.state, o.crd, thresholds].filter((part) => part !== undefined && part !== '').join(' \u00b7 ')),
        h('td', undefined, ''),
        h('td', { class: 'nowrap' }, timeAgo(o.at)),
      );
    }),
  ];
  return card(
    'Overrides',
    table(['Service', 'Kind', 'State', 'Actor', 'At'], h('tbody', undefined, rows), { 'aria-label': 'Scale and trigger overrides' }),
  );
}
