// Counts by state, how long the oldest pending delivery has waited, the open alerts, the workers
// and what was refused in the last hour, and the dead ones to retry.

import { getJson, postJson } from '../api.js';
import { now, syncClock } from '../clock.js';
import { h, keepFocus, replaceChildren } from '../dom.js';
import { deliveryTable, reconcileRows } from '../rows.js';
import { href } from '../router.js';
import { DELIVERY_STATES, type DeliveryPage, type Moved, type Overview } from '../types.js';
import { ageEl, clearError, confirmButton, movedMessage, showError, timeAgo } from '../ui.js';
import { noWorkerNote, setWorkers } from '../workers.js';
import { historySection } from './stats-history.js';
import type { View } from './view.js';

/**
 * One list item per entry, or the line that says why there is none: `missing` when this schema
 * does not record them (`null`), `none` when there are none.
 */
function listOr<T>(
  entries: readonly T[] | null,
  notes: { missing?: string; none: string },
  cls: string,
  item: (entry: T) => HTMLElement,
): HTMLElement {
  if (entries === null) return h('p', { class: 'muted' }, notes.missing);
  if (entries.length === 0) return h('p', { class: 'empty-state' }, notes.none);
  return h('ul', { class: cls }, entries.map(item));
}

/** One line per worker: id, where it runs, what it runs, when it last beat; gone ones say so. */
function workerList(workers: NonNullable<Overview['workers']>): HTMLElement {
  return listOr(workers.list, { none: 'No worker has a heartbeat: nothing runs deliveries.' }, 'worker-list', (worker) =>
    h(
      'li',
      { 'data-testid': 'worker', 'data-live': String(worker.live), class: worker.live ? 'worker' : 'worker gone' },
      h('span', { class: 'mono' }, worker.id),
      h('span', { class: 'badge' }, worker.live ? 'live' : 'gone'),
      h('span', { class: 'muted mono' }, `${worker.host} pid ${worker.pid}`),
      h('span', { class: 'muted' }, `running ${worker.running} of ${worker.concurrency}`),
      h('span', { class: 'muted' }, 'last seen ', timeAgo(worker.lastSeenAt)),
    ),
  );
}

/** One line per refusal code of the last hour (a code refused none is not listed, so none means an empty list). */
function refusalList(refusals: Overview['refusals']): HTMLElement {
  const notes = {
    missing: 'Not recorded by this schema: run rack-webhooks inbox migrate.',
    none: 'No delivery was refused in the last hour.',
  };
  return listOr(refusals?.byCode ?? null, notes, 'refusal-list', ({ code, count }) =>
    h(
      'li',
      { 'data-testid': 'refusal', 'data-code': code },
      h('span', { class: 'mono' }, code),
      ' ',
      h('strong', undefined, String(count)),
    ),
  );
}

/** One line per open incident of inbox.watch(): severity, summary, since when. */
function alertList(alerts: Overview['alerts']): HTMLElement {
  const notes = { missing: 'No incidents table in this schema: run rack-webhooks inbox migrate.', none: 'No open alerts.' };
  return listOr(alerts, notes, 'alert-list', (alert) =>
    h(
      'li',
      { 'data-testid': 'alert', 'data-alert-key': alert.key, 'data-severity': alert.severity },
      h('span', { class: `badge severity-${alert.severity}` }, alert.severity),
      h('span', undefined, alert.summary),
      h('span', { class: 'muted' }, 'since ', timeAgo(alert.since)),
    ),
  );
}

export function statsView(): View {
  const counts = h('div', { class: 'stat-grid' });
  const history = historySection();
  const oldest = h('p', { class: 'oldest', 'data-testid': 'oldest-pending' });
  const status = h('p', { class: 'status', role: 'status', 'data-testid': 'action-status' });
  const { element: deadTable, body } = deliveryTable();
  const deadSummary = h('p', { class: 'summary' });
  const actions = h('div', { class: 'actions' });
  const workers = h('div', { 'data-testid': 'workers' });
  const refused = h('div', { 'data-testid': 'refusals' });
  const alerts = h('div', { 'data-testid': 'alerts' });
  const element = h(
    'section',
    { class: 'view' },
    h('h1', { tabindex: '-1' }, 'Stats'),
    counts,
    oldest,
    h('section', { class: 'card', 'aria-labelledby': 'alerts-title' }, h('h2', { id: 'alerts-title' }, 'Open alerts'), alerts),
    history.element,
    h(
      'div',
      { class: 'grid-2' },
      h('section', { class: 'card', 'aria-labelledby': 'workers-title' }, h('h2', { id: 'workers-title' }, 'Workers'), workers),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'refused-title' },
        h('h2', { id: 'refused-title' }, 'Refused in the last hour'),
        refused,
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'dead-title' },
      h('div', { class: 'card-head' }, h('h2', { id: 'dead-title' }, 'Dead deliveries'), actions),
      noWorkerNote(),
      status,
      deadSummary,
      deadTable,
    ),
  );
  let deadCount = -1;

  const retryAll = (): Promise<Moved> => postJson<Moved>('/api/retry-dead');

  async function refresh(): Promise<void> {
    try {
      const [overview, dead] = await Promise.all([
        getJson<Overview>('/api/overview'),
        getJson<DeliveryPage>('/api/deliveries?state=dead&limit=50'),
      ]);
      syncClock(overview.now);
      void history.refresh();
      clearError();
      setWorkers(overview.workers);
      replaceChildren(
        workers,
        overview.workers === null
          ? h('p', { class: 'muted' }, 'No heartbeats in this schema: run rack-webhooks inbox migrate.')
          : workerList(overview.workers),
      );
      replaceChildren(refused, refusalList(overview.refusals));
      replaceChildren(alerts, alertList(overview.alerts));
      const stats = overview.stats;
      keepFocus(counts, () =>
        replaceChildren(
          counts,
          [...DELIVERY_STATES, 'total' as const].map((state) =>
            h(
              'a',
              {
                class: `stat stat-${state}`,
                href: state === 'total' ? href.deliveries() : href.deliveries({ state }),
                'data-testid': 'stat',
                'data-state': state,
                'data-key': `stat-${state}`,
                'aria-label': `${stats[state]} ${state}`,
              },
              h('span', { class: 'stat-count mono' }, String(stats[state])),
              h('span', { class: 'stat-name' }, state),
            ),
          ),
        ),
      );
      replaceChildren(
        oldest,
        stats.oldestPendingAgeMs === null
          ? 'No delivery is pending.'
          : ['The oldest pending delivery has waited ', h('strong', undefined, ageEl(now() - stats.oldestPendingAgeMs)), '.'],
      );
      reconcileRows(body, dead.deliveries, 'No dead deliveries.');
      deadSummary.textContent =
        stats.dead === 0 ? '' : `${stats.dead} dead${dead.next === null ? '' : `; the newest ${dead.deliveries.length} shown`}.`;
      // Rebuild the button only when the count changes, so a live update does not close its confirm step.
      if (deadCount !== stats.dead) {
        deadCount = stats.dead;
        const hadFocus = actions.contains(document.activeElement);
        replaceChildren(
          actions,
          confirmButton({
            label: 'Retry all dead',
            key: 'retry-all',
            confirmLabel: `Confirm: retry ${stats.dead} dead`,
            question: 'Move every dead delivery back to pending?',
            disabled: stats.dead === 0,
            disabledReason: 'No dead delivery',
            run: retryAll,
            done: (moved) => {
              status.textContent = movedMessage(moved);
              void refresh();
            },
          }),
        );
        if (hadFocus) actions.querySelector<HTMLElement>('button:not([disabled])')?.focus();
      }
    } catch (error) {
      showError(error);
    }
  }

  return { element, refresh };
}
