// The console page: a header (navigation, counts by state, live indicator), the error banner and
// the current view, chosen by the URL's hash. The server serves only the shell and the API.

import './console.css';
import { getJson } from './api.js';
import { syncClock } from './clock.js';
import { h, replaceChildren } from './dom.js';
import { onChange, startLive } from './live.js';
import { currentRoute, href, type Route } from './router.js';
import { DELIVERY_STATES, type Overview, type Stats } from './types.js';
import { clearError, errorBanner, showError, startTicker } from './ui.js';
import { appView } from './views/app.js';
import { appsView } from './views/apps.js';
import { deliveriesView } from './views/deliveries.js';
import { deliveryView } from './views/delivery.js';
import { gapsView } from './views/gaps.js';
import { statsView } from './views/stats.js';
import type { View } from './views/view.js';
import { setWorkers, workersBadge } from './workers.js';

const NAV = [
  ['deliveries', 'Deliveries', href.deliveries()],
  ['apps', 'Apps', href.apps()],
  ['gaps', 'Gaps', href.gaps()],
  ['stats', 'Stats', href.stats()],
] as const;

/** How often the header looks at the workers again (a worker beats every 5 s by default). */
const WORKERS_POLL_MS = 5000;

const navLinks = NAV.map(([name, text, link]) => h('a', { href: link, 'data-nav': name }, text));
const counts = h('nav', { class: 'counts', 'aria-label': 'Deliveries by state', 'data-testid': 'header-stats' });
const source = h('p', { class: 'source mono' });
const main = h('main', { id: 'app', tabindex: '-1' });

function renderCounts(stats: Stats): void {
  replaceChildren(
    counts,
    DELIVERY_STATES.map((state) =>
      h(
        'a',
        {
          href: href.deliveries({ state }),
          class: `count count-${state}${stats[state] > 0 ? '' : ' zero'}`,
          'aria-label': `${stats[state]} ${state}`,
          title: `Show the ${state} deliveries`,
          'data-state': state,
        },
        h('span', { class: `dot state-${state}`, 'aria-hidden': 'true' }),
        h('span', { class: 'count-name' }, state),
        h('span', { class: 'count-value mono' }, String(stats[state])),
      ),
    ),
  );
}

function viewFor(route: Route): View {
  switch (route.name) {
    case 'deliveries':
      return deliveriesView(route.query);
    case 'delivery':
      return deliveryView(route.id);
    case 'apps':
      return appsView();
    case 'app':
      return appView(route.app);
    case 'gaps':
      return gapsView();
    case 'stats':
      return statsView();
    case 'not-found':
      return {
        element: h(
          'section',
          { class: 'view' },
          h('h1', { tabindex: '-1' }, 'Not found'),
          h('p', undefined, 'Nothing lives at #/', route.path, '. ', h('a', { href: href.deliveries() }, 'Go to the deliveries.')),
        ),
        refresh: async () => undefined,
      };
  }
}

const TITLES: Record<Route['name'], string> = {
  deliveries: 'Deliveries',
  delivery: 'Delivery',
  apps: 'Apps',
  app: 'App',
  gaps: 'Gaps',
  stats: 'Stats',
  'not-found': 'Not found',
};

let view: View | undefined;
let routeName: Route['name'] | undefined;

function show(route: Route): void {
  const section =
    route.name === 'delivery' || route.name === 'deliveries'
      ? 'deliveries'
      : route.name === 'app' || route.name === 'apps'
        ? 'apps'
        : route.name;
  for (const link of navLinks) {
    if (link.dataset['nav'] === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const detail = route.name === 'delivery' ? ` ${route.id}` : route.name === 'app' ? ` ${route.app}` : '';
  document.title = `${TITLES[route.name]}${detail} \u00b7 rack-webhooks console`;
  if (view?.update !== undefined && routeName === route.name && view.update(route)) return;
  const first = view === undefined;
  view?.dispose?.();
  clearError();
  view = viewFor(route);
  routeName = route.name;
  replaceChildren(main, view.element);
  void view.refresh();
  // Moving between views, the keyboard starts at the new heading (not at the top of the page).
  if (!first) view.element.querySelector<HTMLElement>('h1')?.focus({ preventScroll: false });
  if (!first) window.scrollTo(0, 0);
}

// Live changes come in bursts (a delivery, then its attempt, then done): refetch at most once at a time.
let refreshing: Promise<void> | undefined;
let again = false;
function refreshView(): void {
  if (refreshing !== undefined) {
    again = true;
    return;
  }
  const current = view;
  if (current === undefined) return;
  refreshing = current.refresh().finally(() => {
    refreshing = undefined;
    if (again) {
      again = false;
      refreshView();
    }
  });
}

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(target.tagName));
}

function start(): void {
  const root = document.getElementById('root') ?? document.body;
  const skip = h('a', { href: '#app', class: 'skip' }, 'Skip to content');
  skip.addEventListener('click', (event) => {
    event.preventDefault(); // the hash is the router's: focus the content instead of navigating
    main.focus();
  });
  const header = h(
    'header',
    { class: 'top' },
    h(
      'div',
      { class: 'top-inner' },
      h(
        'a',
        { href: href.deliveries(), class: 'brand' },
        h('span', { class: 'brand-mark', 'aria-hidden': 'true' }),
        'rack-webhooks ',
        h('span', { class: 'muted' }, 'console'),
      ),
      h('nav', { class: 'nav', 'aria-label': 'Views' }, navLinks),
      counts,
      workersBadge,
      startLive(),
    ),
  );
  replaceChildren(root, skip, header, h('div', { class: 'wrap' }, errorBanner(), main, h('footer', undefined, source)));

  addEventListener('hashchange', () => show(currentRoute()));
  addEventListener('keydown', (event) => {
    if (event.key === '/' && !event.ctrlKey && !event.metaKey && !event.altKey && !isTyping(event.target)) {
      const filter = document.getElementById('filter-action');
      if (filter !== null) {
        event.preventDefault();
        filter.focus();
      }
    }
  });
  const loadOverview = (): Promise<void> =>
    getJson<Overview>('/api/overview')
      .then((overview) => {
        syncClock(overview.now);
        renderCounts(overview.stats);
        setWorkers(overview.workers);
        source.textContent = `inbox table ${overview.table} on ${overview.database}`;
      })
      .catch(showError);
  onChange((stats) => {
    if (stats === undefined) void loadOverview();
    else renderCounts(stats);
    refreshView();
  });
  void loadOverview();
  // Heartbeats change no delivery, so the stream says nothing of them: the header asks again.
  setInterval(() => void loadOverview(), WORKERS_POLL_MS);
  startTicker();
  show(currentRoute());
}

start();
