import { compareEvents } from '../events/compare.js';
import type { AnyWebhookEvent } from '../events/types.js';
import { own, stepPromotes } from './services.js';
import type { PromoteState } from './types.js';
import { field } from './read-field.js';

/** What the anomaly checks read: the events each promote and each auto-shutdown tick saw. */
export interface TickEvents {
  readonly armed?: AnyWebhookEvent;
  readonly fired?: AnyWebhookEvent;
  readonly failed?: AnyWebhookEvent;
  readonly restored?: AnyWebhookEvent;
}

export interface PromoteEvents {
  readonly start?: AnyWebhookEvent;
  readonly terminals: readonly AnyWebhookEvent[];
}

/** How many promotes and ticks an app keeps; the ones whose first event is oldest go first. */
export const MAX_PROMOTES = 1000;
export const MAX_TICKS = 1000;

const TICK_ROLES: ReadonlyMap<string, keyof TickEvents> = /* @__PURE__ */ new Map([
  ['app:budget:auto-shutdown:armed', 'armed'],
  ['app:budget:auto-shutdown:fired', 'fired'],
  ['app:budget:auto-shutdown:failed', 'failed'],
  ['app:budget:auto-shutdown:restored', 'restored'],
]);

interface Tracked<T> {
  value: T;
  first: bigint;
}

/**
 * A promote depends only on its release's events and a tick only on its own: they live beside
 * the app's fold, each kept in timestamp order, so a late event costs a sorted insert here
 * instead of copying every promote on every re-folded step.
 */
export class LifecycleIndex {
  readonly #releases = new Map<string, Tracked<AnyWebhookEvent[]>>();
  readonly #ticks = new Map<string, Tracked<TickEvents>>();
  #promotes: Readonly<Record<string, PromoteState>> | undefined;

  add(event: AnyWebhookEvent, nanos: bigint, currentTickId: string | undefined): void {
    if (event.action === 'release:promote' || event.action.startsWith('app:promote:')) this.#addPromote(event, nanos);
    const role = TICK_ROLES.get(event.action);
    if (role !== undefined) this.#addTick(event, nanos, role, currentTickId);
  }

  #addPromote(event: AnyWebhookEvent, nanos: bigint): void {
    const releaseId = field(event.data, 'id');
    if (releaseId === undefined) return;
    let tracked = this.#releases.get(releaseId);
    if (tracked === undefined) {
      this.#releases.set(releaseId, (tracked = { value: [], first: nanos }));
      if (this.#releases.size > MAX_PROMOTES) evictOldest(this.#releases, undefined);
    }
    const events = tracked.value;
    let index = events.length;
    while (index > 0 && compareEvents(event, events[index - 1]!) < 0) index--;
    events.splice(index, 0, event);
    if (nanos < tracked.first) tracked.first = nanos;
    this.#promotes = undefined;
  }

  #addTick(event: AnyWebhookEvent, nanos: bigint, role: keyof TickEvents, currentTickId: string | undefined): void {
    const tickId = field(event.data, 'tick_id');
    // A dry run is not the real lifecycle: it neither makes nor hides an anomaly.
    const dryRun = (event.data as Record<string, unknown>)['dry_run'];
    if (tickId === undefined || dryRun === 'true' || dryRun === true) return;
    let tracked = this.#ticks.get(tickId);
    if (tracked === undefined) {
      this.#ticks.set(tickId, (tracked = { value: {}, first: nanos }));
      // The tick of the current phase stays: its :restored may come days later.
      if (this.#ticks.size > MAX_TICKS) evictOldest(this.#ticks, currentTickId);
    }
    const existing = tracked.value[role];
    // The earliest copy of each role by timestamp, whatever arrived first.
    if (existing === undefined || compareEvents(event, existing) < 0) tracked.value = { ...tracked.value, [role]: event };
    if (nanos < tracked.first) tracked.first = nanos;
  }

  /** Each release's start, then its first terminal outcome by timestamp; keyed in release id order. */
  promotes(): Readonly<Record<string, PromoteState>> {
    if (this.#promotes !== undefined) return this.#promotes;
    const entries: [string, PromoteState][] = [];
    for (const [releaseId, { value: events }] of sortedByKey(this.#releases)) {
      let one: Readonly<Record<string, PromoteState>> = {};
      for (const event of events) one = stepPromotes(one, event);
      const promote = own(one, releaseId);
      if (promote !== undefined) entries.push([releaseId, promote]);
    }
    // fromEntries defines own properties: a release id `__proto__` stays data.
    return (this.#promotes = Object.fromEntries(entries));
  }

  promoteEvents(): Iterable<[string, PromoteEvents]> {
    return sortedByKey(this.#releases).map(([releaseId, { value: events }]): [string, PromoteEvents] => {
      const start = events.find((event) => event.action === 'release:promote');
      return [releaseId, { ...(start === undefined ? {} : { start }), terminals: events.filter((event) => isTerminal(event.action)) }];
    });
  }

  ticks(): Iterable<[string, TickEvents]> {
    return sortedByKey(this.#ticks).map(([tickId, { value }]): [string, TickEvents] => [tickId, value]);
  }
}

function isTerminal(action: string): boolean {
  return action === 'app:promote:completed' || action === 'app:promote:errored' || action === 'app:promote:cancelled';
}

function evictOldest<T>(map: Map<string, Tracked<T>>, keep: string | undefined): void {
  let oldest: string | undefined;
  let oldestFirst = 0n;
  for (const [key, { first }] of map) {
    if (key === keep) continue;
    if (oldest === undefined || first < oldestFirst || (first === oldestFirst && key < oldest)) [oldest, oldestFirst] = [key, first];
  }
  if (oldest !== undefined) map.delete(oldest);
}

/** Whatever order they arrived in: results read the same for the same events. */
function sortedByKey<T>(map: Map<string, T>): [string, T][] {
  return [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
