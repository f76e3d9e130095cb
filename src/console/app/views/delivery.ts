// One delivery in full: the event, what verification found, every attempt, Retry and Replay.

import { ApiError, getJson, postJson } from '../api.js';
import { facts, h, keepFocus, replaceChildren } from '../dom.js';
import { duration, skew, utc } from '../format.js';
import { jsonPre } from '../json-view.js';
import { href } from '../router.js';
import type { Attempt, DeliveryDetail, DeliveryResponse, Moved } from '../types.js';
import { noWorkerNote } from '../workers.js';
import {
  clearError,
  confirmButton,
  detailSection,
  movedMessage,
  originBadge,
  showError,
  stateBadge,
  table,
  timeAgo,
  timeUtc,
} from '../ui.js';
import type { View } from './view.js';

function secretText(index: number): string {
  // As the CLI and the README write it: the position a person counts in "new,old", and the field's value.
  return `#${index + 1} in the receiver's list (secretIndex ${index})`;
}

/** A reconciled delivery was never signed: what proves its event instead. */
function reconciledFacts(delivery: DeliveryDetail): HTMLElement {
  const proof = delivery.evidence;
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'verification-title', 'data-testid': 'reconciled-evidence' },
    h('h2', { id: 'verification-title' }, 'Reconciled, not received'),
    h(
      'p',
      undefined,
      'No signature: the rack sent this event and it never arrived; inbox reconcile --record rebuilt it from the rack API. ',
      'Its body holds only what the API records give.',
    ),
    facts([
      ['Route', proof === null ? undefined : h('span', { class: 'mono break' }, `GET ${proof.route}`)],
      ['Proof', proof === null ? undefined : h('span', { class: 'mono break' }, `${proof.field} = ${proof.value}`)],
      ['Sent at', proof === null ? undefined : h('span', { class: 'mono' }, utc(proof.at, true))],
      ['Recorded', h('span', { class: 'mono', title: delivery.receivedAt }, utc(delivery.receivedAt, true))],
    ]),
  );
}

function verificationFacts(delivery: DeliveryDetail): HTMLElement {
  if (delivery.origin === 'reconciled') return reconciledFacts(delivery);
  const v = delivery.verification;
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'verification-title' },
    h('h2', { id: 'verification-title' }, 'Verification'),
    facts(
      [
        ['Dispatch t', h('span', { class: 'mono' }, String(v.signedAt), h('span', { class: 'muted' }, ` = ${utc(v.signedAtIso)}`))],
        ['Received', h('span', { class: 'mono', title: v.receivedAt }, utc(v.receivedAt, true))],
        ['Skew at receipt', h('span', { class: 'mono', title: 'received minus the signature\u2019s t' }, skew(v.skewSeconds))],
        ['Secret matched', h('span', { class: 'mono' }, secretText(v.secretIndex))],
      ],
      { 'data-testid': 'verification' },
    ),
    h('p', { class: 'hint' }, 'The signature header and the secrets are never shown.'),
  );
}

function deliveryFacts(delivery: DeliveryDetail): HTMLElement {
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'delivery-title' },
    h('h2', { id: 'delivery-title' }, 'Delivery'),
    facts([
      ['Id', h('span', { class: 'mono' }, delivery.id)],
      ['App', delivery.app === null ? undefined : h('a', { href: href.app(delivery.app), class: 'mono', 'data-key': 'app' }, delivery.app)],
      ['Event time', timeUtc(delivery.eventTime, true)],
      ['Tick', delivery.tickId === null ? undefined : h('span', { class: 'mono break' }, delivery.tickId)],
      [
        'Duplicate of',
        delivery.duplicateOf === null
          ? undefined
          : h('a', { href: href.delivery(delivery.duplicateOf), class: 'mono', 'data-testid': 'duplicate-of' }, `#${delivery.duplicateOf}`),
      ],
      // Only a pending delivery waits for a run; for done or dead ones run_at is a leftover.
      ['Next run', delivery.runAt === null || delivery.state !== 'pending' ? undefined : timeAgo(delivery.runAt)],
      ['Done', delivery.doneAt === null ? undefined : timeAgo(delivery.doneAt)],
      ['Replayed', delivery.replayedAt === null ? undefined : timeAgo(delivery.replayedAt)],
      ['Last error', delivery.lastError === null ? undefined : h('span', { class: 'error-text pre' }, delivery.lastError)],
    ]),
  );
}

/** The message, the class it was thrown as, and the stack folded away (it can be 4 KiB). */
function attemptError(attempt: Attempt): HTMLElement {
  return h(
    'div',
    undefined,
    attempt.errorClass === null ? null : h('span', { class: 'badge mono error-class', 'data-testid': 'error-class' }, attempt.errorClass),
    attempt.errorClass === null ? null : ' ',
    h('span', { class: 'error-text pre' }, attempt.error ?? ''),
    attempt.errorStack === null
      ? null
      : h(
          'details',
          { class: 'stack-trace' },
          h('summary', undefined, 'Stack'),
          h('pre', { class: 'mono small', 'data-testid': 'error-stack' }, attempt.errorStack),
        ),
  );
}

function attemptRow(attempt: Attempt): HTMLTableRowElement {
  const took = attempt.finishedAt === null ? null : Date.parse(attempt.finishedAt) - Date.parse(attempt.startedAt);
  return h(
    'tr',
    { 'data-testid': 'attempt-row', 'data-outcome': attempt.outcome ?? 'running' },
    h('td', { class: 'num mono' }, String(attempt.attempt)),
    h('td', { class: 'mono nowrap' }, attempt.worker),
    h('td', { class: 'nowrap' }, timeUtc(attempt.startedAt, true)),
    h('td', { class: 'num mono nowrap' }, took === null || Number.isNaN(took) ? '\u2014' : duration(took)),
    h('td', undefined, h('span', { class: `badge outcome-${attempt.outcome ?? 'running'}` }, attempt.outcome ?? 'running')),
    h('td', { class: 'attempt-error' }, attempt.error === null ? h('span', { class: 'muted' }, '\u2014') : attemptError(attempt)),
  );
}

function fieldsTable(delivery: DeliveryDetail): HTMLElement {
  if (delivery.fields.length === 0) return h('p', { class: 'muted' }, 'No schema fields for this action.');
  const body = h(
    'tbody',
    undefined,
    delivery.fields.map((f) =>
      h(
        'tr',
        undefined,
        h('td', { class: 'mono nowrap' }, f.path),
        h('td', { class: 'mono muted' }, f.type),
        h('td', { class: 'mono break' }, f.value),
        h('td', { class: 'muted' }, f.description ?? ''),
      ),
    ),
  );
  return table(['Field', 'Type', 'Value', 'Meaning'], body, { class: 'fields', 'aria-label': 'Event fields' });
}

export function deliveryView(id: string): View {
  const heading = h('h1', { tabindex: '-1', class: 'mono' }, `Delivery ${id}`);
  const status = h('p', { class: 'status', role: 'status', 'data-testid': 'action-status' });
  const content = h('div', { class: 'detail' });
  const element = detailSection(href.deliveries(), 'Deliveries', heading, status, content);
  let shown = '';

  const act = (verb: 'retry' | 'replay') => (): Promise<Moved> => postJson<Moved>(`/api/deliveries/${encodeURIComponent(id)}/${verb}`);
  const done = (moved: Moved): void => {
    status.textContent = movedMessage(moved);
    void refresh();
  };

  function render(delivery: DeliveryDetail): void {
    heading.textContent = delivery.action;
    const attemptsBody = h('tbody', undefined, delivery.attempts.map(attemptRow));
    replaceChildren(
      content,
      h(
        'div',
        { class: 'detail-head' },
        stateBadge(delivery.state, { 'data-testid': 'delivery-state' }),
        originBadge(delivery.origin),
        h('span', { class: 'mono muted' }, `#${delivery.id}`),
        delivery.app === null ? null : h('span', { class: 'mono break' }, delivery.app),
        h('span', { class: 'muted' }, 'received ', timeAgo(delivery.receivedAt)),
        h(
          'span',
          { class: 'actions' },
          confirmButton({
            label: 'Retry',
            key: 'retry',
            confirmLabel: 'Confirm retry',
            question:
              delivery.state === 'duplicate'
                ? 'Run the handlers for this duplicate (the same event as an earlier delivery) anyway?'
                : 'Move this dead delivery back to pending?',
            disabled: delivery.state !== 'dead' && delivery.state !== 'duplicate',
            disabledReason: 'Only a dead or duplicate delivery can be retried',
            run: act('retry'),
            done,
          }),
          confirmButton({
            label: 'Replay',
            key: 'replay',
            confirmLabel: 'Confirm replay',
            question: 'Run this done delivery\u2019s handler again?',
            disabled: delivery.state !== 'done',
            disabledReason: 'Only a done delivery can be replayed',
            run: act('replay'),
            done,
          }),
        ),
      ),
      noWorkerNote(),
      h(
        'div',
        { class: 'grid-2' },
        h(
          'section',
          { class: 'card event', 'aria-labelledby': 'event-title' },
          h('h2', { id: 'event-title' }, 'Event'),
          delivery.event === null
            ? h('p', { class: 'muted' }, 'The body is not stored.')
            : jsonPre(delivery.event, { 'data-testid': 'event-json', 'aria-label': 'Event JSON' }),
        ),
        h('div', { class: 'stack' }, verificationFacts(delivery), deliveryFacts(delivery)),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'attempts-title' },
        h('h2', { id: 'attempts-title' }, `Attempts (${delivery.attempts.length})`),
        delivery.attempts.length === 0
          ? h('p', { class: 'muted' }, 'Not attempted yet.')
          : table(['#', 'Worker', 'Started (UTC)', ['Took', 'num'], 'Outcome', 'Error'], attemptsBody, {
              class: 'attempts',
              'aria-label': 'Attempts',
            }),
      ),
      h('section', { class: 'card', 'aria-labelledby': 'fields-title' }, h('h2', { id: 'fields-title' }, 'Fields'), fieldsTable(delivery)),
    );
  }

  async function refresh(): Promise<void> {
    try {
      const { delivery } = await getJson<DeliveryResponse>(`/api/deliveries/${encodeURIComponent(id)}`);
      clearError();
      const text = JSON.stringify(delivery);
      if (text === shown) return; // unchanged: keep the DOM (and an open confirm step) as it is
      shown = text;
      if (!keepFocus(content, () => render(delivery))) heading.focus(); // e.g. on Retry, now disabled
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') {
        shown = '';
        replaceChildren(content, h('p', { class: 'empty-state' }, `No delivery ${id} in this inbox.`));
      }
      showError(error);
    }
  }

  return { element, refresh };
}
