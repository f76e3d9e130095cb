// Small pieces every view uses: badges, times that stay current, the error banner, confirm buttons.

import { ApiError } from './api.js';
import { now } from './clock.js';
import { h } from './dom.js';
import { countdown, duration, plural, relative, utc } from './format.js';
import type { DeliveryState, Moved, Phase } from './types.js';

/** A state badge: the word is always there, the colour only repeats it. */
export function stateBadge(state: DeliveryState, props: Record<string, string> = {}): HTMLElement {
  return h('span', { class: `badge state-${state}`, ...props }, state);
}

/** The words a reconciled delivery carries wherever it is shown: it was never signed, the rack's API proved it. */
export const RECONCILED_TEXT = 'reconciled (unsigned, rebuilt from the rack API)';

/** The mark of a delivery `inbox reconcile --record` stored; `null` for a received one. */
export function originBadge(origin: 'received' | 'reconciled'): HTMLElement | null {
  return origin === 'reconciled'
    ? h('span', { class: 'badge origin-reconciled', 'data-testid': 'origin-reconciled' }, RECONCILED_TEXT)
    : null;
}

const PHASE_TEXT: Record<Phase, string> = {
  idle: 'idle',
  armed: 'armed',
  'shut-down': 'shut down',
  'shutdown-failed': 'shutdown failed',
  restored: 'restored',
};

export function phaseBadge(phase: Phase): HTMLElement {
  return h('span', { class: `badge phase-${phase}` }, PHASE_TEXT[phase] ?? phase);
}

export function breakerBadge(state: 'closed' | 'tripped'): HTMLElement {
  return h('span', { class: `badge breaker-${state}` }, state === 'tripped' ? 'tripped' : 'closed');
}

/** An app's name in a table cell: cut with an ellipsis past ~24 characters, the whole name on hover. */
export function appName(name: string): HTMLElement {
  return h('span', { class: 'app-name', title: name, 'data-testid': 'app-name' }, name);
}

/** "3 min ago", kept current by the ticker; the exact time (as sent) in the tooltip. */
export function timeAgo(value: string | null | undefined): HTMLElement | string {
  if (value === null || value === undefined) return '\u2014';
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return value;
  return h('time', { datetime: new Date(ms).toISOString(), title: `${value} (UTC)`, 'data-rel': value, class: 'rel' }, relative(value));
}

/** "2026-04-27 10:30:00Z" in monospace, the full value as sent in the tooltip. */
export function timeUtc(value: string | null | undefined, withFraction = false): HTMLElement | string {
  if (value === null || value === undefined) return '\u2014';
  return h('time', { datetime: value, title: value, class: 'mono' }, utc(value, withFraction));
}

/** Time left until `to`, ticking each second. */
export function countdownEl(to: string): HTMLElement {
  const element = h('span', { class: 'countdown', role: 'timer', 'data-countdown': to, title: `shutdown expected at ${utc(to)}` });
  renderCountdown(element, to);
  return element;
}

function renderCountdown(element: HTMLElement, to: string): void {
  const left = Date.parse(to) - now();
  element.textContent = left > 0 ? `${countdown(left)} left` : `due ${duration(-left)} ago`;
  element.classList.toggle('overdue', left <= 0);
}

/** An age that keeps growing: `since` is epoch ms on the server clock. */
export function ageEl(since: number): HTMLElement {
  return h('span', { 'data-since': String(since), class: 'age' }, duration(now() - since));
}

let ticker: ReturnType<typeof setInterval> | undefined;

export function startTicker(): void {
  ticker ??= setInterval(() => {
    for (const element of document.querySelectorAll<HTMLElement>('[data-rel]')) {
      const text = relative(element.dataset['rel'] ?? '');
      if (element.textContent !== text) element.textContent = text;
    }
    for (const element of document.querySelectorAll<HTMLElement>('[data-countdown]'))
      renderCountdown(element, element.dataset['countdown'] ?? '');
    for (const element of document.querySelectorAll<HTMLElement>('[data-since]'))
      element.textContent = duration(now() - Number(element.dataset['since']));
  }, 1000);
}

const banner = h('div', { class: 'banner error', role: 'alert', 'data-testid': 'error', hidden: true });

export function errorBanner(): HTMLElement {
  return banner;
}

export function showError(error: unknown): void {
  const message = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);
  banner.textContent = message;
  banner.hidden = false;
}

export function clearError(): void {
  if (!banner.hidden) {
    banner.hidden = true;
    banner.textContent = '';
  }
}

export interface ConfirmOptions {
  /** The button's name, e.g. "Retry". */
  label: string;
  /** Lets a re-render put the focus back on this button. */
  key?: string;
  /** The second step's name, e.g. "Confirm retry". */
  confirmLabel: string;
  disabled?: boolean;
  /** Why it is disabled, shown as the tooltip. */
  disabledReason?: string;
  /** What the confirm step says will happen. */
  question: string;
  run: () => Promise<Moved>;
  done: (moved: Moved) => void;
}

/**
 * A button with a confirm step: the first click swaps it for "Confirm …" and "Cancel" (Escape
 * cancels too), so a stray click or Enter never moves deliveries.
 */
export function confirmButton(options: ConfirmOptions): HTMLElement {
  const start = h(
    'button',
    {
      type: 'button',
      class: 'btn',
      'data-key': options.key,
      disabled: options.disabled === true,
      title: options.disabled === true ? options.disabledReason : undefined,
    },
    options.label,
  );
  const confirm = h(
    'button',
    { type: 'button', class: 'btn btn-danger', 'data-key': options.key === undefined ? undefined : `${options.key}-confirm` },
    options.confirmLabel,
  );
  const cancel = h('button', { type: 'button', class: 'btn btn-quiet' }, 'Cancel');
  const step = h(
    'span',
    { class: 'confirm-step', hidden: true },
    h('span', { class: 'confirm-question' }, options.question),
    confirm,
    cancel,
  );
  const wrapper = h('span', { class: 'confirm' }, start, step);
  const open = (value: boolean): void => {
    start.hidden = value;
    step.hidden = !value;
    (value ? confirm : start).focus();
  };
  start.addEventListener('click', () => open(true));
  cancel.addEventListener('click', () => open(false));
  wrapper.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !step.hidden) {
      event.stopPropagation();
      open(false);
    }
  });
  confirm.addEventListener('click', () => {
    confirm.disabled = cancel.disabled = true;
    options
      .run()
      .then((moved) => {
        clearError();
        options.done(moved);
      })
      .catch(showError)
      .finally(() => {
        confirm.disabled = cancel.disabled = false;
        if (wrapper.isConnected) open(false);
      });
  });
  return wrapper;
}

/** "moved 2 deliveries", and when no worker is live, that they wait for one. */
export function movedMessage({ moved, liveWorkers }: Moved): string {
  const text = `moved ${plural(moved, 'delivery', 'deliveries')}`;
  if (moved === 0 || liveWorkers !== 0) return text;
  return `${text}; no worker is running, ${moved === 1 ? 'it' : 'they'} will run when one starts`;
}

/** A table whose header row is built from the column names; `numeric` columns align right. */
export function table(
  columns: ReadonlyArray<string | readonly [string, string]>,
  body: HTMLTableSectionElement,
  props: Record<string, string> = {},
): HTMLElement {
  const head = h(
    'tr',
    undefined,
    columns.map((column) =>
      typeof column === 'string' ? h('th', { scope: 'col' }, column) : h('th', { scope: 'col', class: column[1] }, column[0]),
    ),
  );
  return h('div', { class: 'table-wrap' }, h('table', props, h('thead', undefined, head), body));
}

/** A detail view's section: the way back to its list (`label`, at `back`), then the view's parts. */
export function detailSection(back: string, label: string, ...parts: HTMLElement[]): HTMLElement {
  return h('section', { class: 'view' }, h('p', { class: 'crumbs' }, h('a', { href: back }, `\u2190 ${label}`)), ...parts);
}
