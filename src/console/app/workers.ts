// Live workers, as the last overview said: the header shows the count, and next to Retry and
// Replay the page says plainly when none is attached (what moves would then wait for one).

import { h, replaceChildren } from './dom.js';
import { plural } from './format.js';
import { href } from './router.js';
import type { Overview } from './types.js';

/** undefined: not known yet, or a schema without heartbeats. */
let live: number | undefined;

const NO_WORKER = 'No worker is running: a retried or replayed delivery waits until one starts.';

export const workersBadge = h('a', {
  href: href.stats(),
  class: 'workers',
  'data-testid': 'header-workers',
  title: 'Workers that sent a heartbeat recently (see Stats)',
});

export function liveWorkers(): number | undefined {
  return live;
}

/** A note for a view's actions: shown while no worker is live, kept current by {@link setWorkers}. */
export function noWorkerNote(): HTMLElement {
  return h('p', { class: 'no-worker', role: 'note', 'data-testid': 'no-worker', 'data-worker-note': '', hidden: live !== 0 }, NO_WORKER);
}

export function setWorkers(workers: Overview['workers']): void {
  live = workers?.live;
  workersBadge.hidden = workers === null;
  if (workers !== null) {
    workersBadge.dataset['live'] = String(workers.live);
    workersBadge.classList.toggle('none', workers.live === 0);
    replaceChildren(
      workersBadge,
      h('span', { class: 'dot', 'aria-hidden': 'true' }),
      workers.live === 0 ? 'no worker' : plural(workers.live, 'worker'),
    );
    workersBadge.setAttribute('aria-label', workers.live === 0 ? 'No worker is running' : `${plural(workers.live, 'worker')} running`);
  }
  for (const note of document.querySelectorAll<HTMLElement>('[data-worker-note]')) note.hidden = live !== 0;
}
