// The delivery table's rows, reconciled by id so a live refresh neither flickers nor steals focus.

import { h } from './dom.js';
import { truncate } from './format.js';
import { href, navigate } from './router.js';
import type { Row } from './types.js';
import { appName, originBadge, stateBadge, table, timeAgo, timeUtc } from './ui.js';

export const DELIVERY_COLUMNS: ReadonlyArray<string | readonly [string, string]> = [
  'State',
  'Action',
  'App',
  ['Event time (UTC)', 'col-event'],
  'Received',
  ['Attempts', 'num'],
  'Last error',
];

/** "app:budget:auto-shutdown:armed" may wrap after a colon, never inside a word. */
function breakable(action: string): Array<string | HTMLElement> {
  return action.split(':').flatMap((part, index) => (index === 0 ? [part] : [':', h('wbr'), part]));
}

function deliveryRow(row: Row): HTMLTableRowElement {
  const error =
    row.lastError === null
      ? h('span', { class: 'muted' }, '\u2014')
      : h('span', { class: 'error-text', title: row.lastError }, truncate(row.lastError, 90));
  const tr = h(
    'tr',
    { 'data-testid': 'delivery-row', 'data-id': row.id, 'data-state': row.state, class: 'clickable' },
    h('td', undefined, stateBadge(row.state), row.origin === 'reconciled' ? ' ' : null, originBadge(row.origin)),
    h('td', undefined, h('a', { href: href.delivery(row.id), class: 'mono', 'data-key': `row-${row.id}` }, breakable(row.action))),
    h('td', { class: 'mono' }, row.app === null ? h('span', { class: 'muted' }, '\u2014') : appName(row.app)),
    h('td', { class: 'nowrap col-event' }, timeUtc(row.eventTime)),
    h('td', { class: 'nowrap' }, timeAgo(row.receivedAt)),
    h('td', { class: 'num mono' }, String(row.attempts)),
    h('td', { class: 'last-error' }, error),
  );
  // A click anywhere on the row opens it; the action link stays the keyboard's way in.
  tr.addEventListener('click', (event) => {
    if ((event.target as Element).closest('a, button') === null && getSelection()?.toString() === '') navigate(href.delivery(row.id));
  });
  return tr;
}

/** Puts `rows` into `body` in order, reusing the element of every row whose data did not change. */
export function reconcileRows(body: HTMLTableSectionElement, rows: readonly Row[], empty: string): void {
  const focused = document.activeElement;
  const focusedKey = focused?.closest<HTMLElement>('[data-key]')?.dataset['key'];
  const existing = new Map<string, HTMLTableRowElement>();
  for (const tr of body.querySelectorAll<HTMLTableRowElement>('tr[data-id]')) existing.set(tr.dataset['id'] ?? '', tr);
  const wanted = rows.map((row) => {
    const signature = JSON.stringify(row);
    const old = existing.get(row.id);
    if (old !== undefined && old.dataset['sig'] === signature) return old;
    const tr = deliveryRow(row);
    tr.dataset['sig'] = signature;
    return tr;
  });
  if (wanted.length === 0) wanted.push(h('tr', { class: 'empty' }, h('td', { colspan: DELIVERY_COLUMNS.length }, empty)));
  // Drop what goes first, then insert only what moved: rows that stay in order are never
  // detached, so the focus inside them survives.
  const keep = new Set(wanted);
  for (const child of [...body.children]) if (!keep.has(child as HTMLTableRowElement)) child.remove();
  wanted.forEach((tr, index) => {
    if (body.children[index] !== tr) body.insertBefore(tr, body.children[index] ?? null);
  });
  if (focusedKey !== undefined && focused?.isConnected === false)
    body.querySelector<HTMLElement>(`[data-key="${CSS.escape(focusedKey)}"]`)?.focus();
}

export function deliveryTable(): { element: HTMLElement; body: HTMLTableSectionElement } {
  const body = h('tbody');
  return { element: table(DELIVERY_COLUMNS, body, { class: 'deliveries', 'aria-label': 'Deliveries' }), body };
}
