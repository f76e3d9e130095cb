import { WEBHOOK_ACTIONS } from '../generated/catalog.js';
import { SAMPLE_EVENTS } from '../generated/samples.js';
import { isKnownAction } from '../events/known.js';
import type { EventOf, WebhookAction } from '../events/types.js';
import { closeMatch } from '../shared/suggest.js';
import { checkOverrides } from './check-overrides.js';
import { dataAt } from './event-times.js';

/** Integer fields travel as decimal strings; a test event is the payload as it travels. */
type WireValue<V> = V extends number ? string : V;
/** An event's `data` as the rack sends it: the integer fields as decimal strings. */
export type WireData<D> = { [K in keyof D]: WireValue<D[K]> };

/** An event for `A` exactly as a rack sends it: every `data` value a string. */
export type TestEvent<A extends WebhookAction> = Omit<EventOf<A>, 'data'> & {
  /** The event's fields, every value a string as the rack sends it. */
  data: WireData<EventOf<A>['data']>;
};

/**
 * What {@link createTestEvent} takes to change its realistic defaults. Checked at run time too: an
 * unknown option or field, or a value of the wrong type, is a `TypeError`. `undefined` means "not given".
 */
export interface TestEventOverrides<A extends WebhookAction> {
  /** The event's status (one this action can have). */
  status?: EventOf<A>['status'];
  /** The event's timestamp (RFC 3339). */
  timestamp?: string;
  /** Fields of this action's `data` only, every value a string: a field of another event is an error. */
  data?: Partial<WireData<EventOf<A>['data']>>;
  /**
   * Fields this action does not have, sent as given (strings, as the rack sends every value): to
   * test that a receiver ignores unknown fields, as a newer rack may send some. A field the action
   * has belongs in `data`.
   */
  extraData?: { readonly [field: string]: string };
}

function randomHex(bytes: number): string {
  const values = globalThis.crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(values, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** RFC 3339 with nanoseconds and the trailing zeros dropped, as racks write it. */
export function rackTimestamp(date = new Date()): string {
  const fraction =
    `${String(date.getUTCMilliseconds()).padStart(3, '0')}${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`.replace(/0+$/, '');
  return `${date.toISOString().slice(0, 19)}${fraction === '' ? '' : `.${fraction}`}Z`;
}

/** `tick-<RFC 3339 second>-<32 hex>`, with UUID v4 version and variant bits, as racks make them. */
export function rackTickId(date = new Date()): string {
  const hex = randomHex(16).split('');
  hex[12] = '4';
  hex[16] = '89ab'[Number.parseInt(hex[16]!, 16) & 3]!;
  return `tick-${date.toISOString().slice(0, 19)}Z-${hex.join('')}`;
}

/**
 * A realistic event for any known action, shaped as deployed racks send it (valid against its
 * schema), with a fresh timestamp and, where the action has one, a fresh `tick_id`.
 *
 * @param action - Any action of the catalog.
 * @param overrides - A status, a timestamp, `data` fields of this action, or `extraData` fields it does not have.
 * @returns The event with every `data` value a string, as the rack sends it.
 * @throws TypeError for an unknown action, option or `data` field (naming the closest known one), a
 * value that is not a string, an integer field that is not a decimal string, or a value outside a
 * fixed set (`state`, a fixed `status`, `actor: "system"` on tick events).
 *
 * @example
 * ```ts
 * import { createTestEvent } from 'rack-webhooks/testing';
 *
 * const event = createTestEvent('app:budget:auto-shutdown:cancelled', { data: { cancel_reason: 'cap-raised' } });
 * event.data.tick_id; // 'tick-2026-…Z-<32 hex>', fresh for each call
 * ```
 */
export function createTestEvent<A extends WebhookAction>(action: A, overrides: TestEventOverrides<A> = {}): TestEvent<A> {
  if (!isKnownAction(action)) {
    const match = typeof action === 'string' ? closeMatch(action, WEBHOOK_ACTIONS) : undefined;
    throw new TypeError(
      `createTestEvent: unknown action ${JSON.stringify(action)}${match === undefined ? '' : ` (did you mean "${match}"?)`}`,
    );
  }
  checkOverrides(action, overrides);
  const sample = SAMPLE_EVENTS[action]!;
  const now = new Date();
  // Every time in data is relative to the event's timestamp, the one given or now.
  const given = overrides.timestamp === undefined ? Number.NaN : Date.parse(overrides.timestamp.replace(/(\.\d{3})\d+/, '$1'));
  const data = dataAt(action, sample.data, Number.isNaN(given) ? now : new Date(given));
  // A fresh tick_id, at the tick's time: for :fired, the tick that armed it, an hour before.
  if (data['tick_id'] !== undefined) {
    const tickTime = Date.parse(/^tick-(.+?Z)-/.exec(data['tick_id'])?.[1] ?? '');
    data['tick_id'] = rackTickId(Number.isNaN(tickTime) ? now : new Date(tickTime));
  }
  for (const fields of [overrides.data, overrides.extraData] as (Record<string, string | undefined> | undefined)[]) {
    for (const [field, value] of Object.entries(fields ?? {})) if (value !== undefined) data[field] = value;
  }
  return {
    action,
    status: overrides.status ?? sample.status,
    timestamp: overrides.timestamp ?? rackTimestamp(now),
    data,
  } as unknown as TestEvent<A>;
}
