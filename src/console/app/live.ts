// One EventSource for the page. `change` carries fresh stats; the current view refetches what it
// shows. EventSource reconnects by itself, so an error only changes the indicator.

import { h } from './dom.js';
import type { Stats } from './types.js';

type Listener = (stats: Stats | undefined) => void;
type Status = 'connecting' | 'live' | 'reconnecting' | 'offline';

const LABELS: Record<Status, string> = {
  connecting: 'connecting\u2026',
  live: 'live',
  reconnecting: 'reconnecting\u2026',
  offline: 'offline: reload',
};
const listeners = new Set<Listener>();

export function onChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function statsOf(data: string): Stats | undefined {
  try {
    const parsed = JSON.parse(data) as { stats?: Stats };
    return typeof parsed.stats?.total === 'number' ? parsed.stats : undefined;
  } catch {
    return undefined;
  }
}

/** Opens the stream and returns the indicator element that shows its status. */
export function startLive(): HTMLElement {
  const label = h('span', { class: 'live-label' }, LABELS.connecting);
  const indicator = h(
    'span',
    { class: 'live', 'data-status': 'connecting', 'data-testid': 'live', title: 'Server-sent events from api/stream' },
    h('span', { class: 'live-dot', 'aria-hidden': 'true' }),
    label,
  );
  const show = (status: Status): void => {
    indicator.dataset['status'] = status;
    label.textContent = LABELS[status];
  };
  if (typeof EventSource === 'undefined') {
    show('offline');
    return indicator;
  }
  const source = new EventSource('api/stream');
  let missed = false;
  source.addEventListener('open', () => {
    show('live');
    // Changes made while the stream was down were never announced: refetch once.
    if (missed) for (const listener of listeners) listener(undefined);
    missed = false;
  });
  source.addEventListener('error', () => {
    missed = true;
    show(source.readyState === EventSource.CLOSED ? 'offline' : 'reconnecting');
  });
  source.addEventListener('change', (event) => {
    show('live');
    const stats = statsOf((event as MessageEvent<string>).data);
    for (const listener of listeners) listener(stats);
  });
  return indicator;
}
