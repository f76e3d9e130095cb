import type { AnyWebhookEvent } from '../events/types.js';
import { IDLE, stepAutoShutdown } from './auto-shutdown.js';
import { CLOSED, NO_BUDGET, stepBreaker, stepBudget } from './budget.js';
import { timestampNanos } from '../events/compare.js';
import { own, stepBuild, stepPromotes, stepRelease, stepScaleOverrides, stepTriggersOverrides } from './services.js';
import type { AppState } from './types.js';

/** What the anomaly checks need, folded with the state: which events each tick and promote saw. */
export interface TickEvents {
  readonly armed?: AnyWebhookEvent;
  readonly fired?: AnyWebhookEvent;
  readonly restored?: AnyWebhookEvent;
}

export interface PromoteEvents {
  readonly start?: AnyWebhookEvent;
  readonly terminals: readonly AnyWebhookEvent[];
}

export interface Folded {
  readonly state: AppState;
  readonly ticks: Readonly<Record<string, TickEvents>>;
  readonly promoteEvents: Readonly<Record<string, PromoteEvents>>;
}

export function initialFold(app: string): Folded {
  return {
    state: { app, autoShutdown: IDLE, breaker: CLOSED, budget: NO_BUDGET, scaleOverrides: {}, triggersOverrides: {}, promotes: {}, updatedAt: '' },
    ticks: {},
    promoteEvents: {},
  };
}

// A Map: an action named `constructor` or `__proto__` finds nothing.
const TICK_ROLES: ReadonlyMap<string, keyof TickEvents> = new Map([
  ['app:budget:auto-shutdown:armed', 'armed'],
  ['app:budget:auto-shutdown:fired', 'fired'],
  ['app:budget:auto-shutdown:restored', 'restored'],
]);

function text(data: unknown, key: string): string | undefined {
  const value = (data as Record<string, unknown>)[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function stepTicks(ticks: Folded['ticks'], event: AnyWebhookEvent): Folded['ticks'] {
  const role = TICK_ROLES.get(event.action);
  if (role === undefined) return ticks;
  const tickId = text(event.data, 'tick_id');
  // A dry run is not the real lifecycle (stepAutoShutdown ignores it too): it neither makes nor hides an anomaly.
  const dryRun = (event.data as Record<string, unknown>)['dry_run'];
  if (dryRun === 'true' || dryRun === true) return ticks;
  if (tickId === undefined || own(ticks, tickId)?.[role] !== undefined) return ticks;
  return { ...ticks, [tickId]: { ...own(ticks, tickId), [role]: event } };
}

function stepPromoteEvents(promotes: Folded['promoteEvents'], event: AnyWebhookEvent): Folded['promoteEvents'] {
  const isStart = event.action === 'release:promote';
  if (!isStart && !event.action.startsWith('app:promote:')) return promotes;
  const releaseId = text(event.data, 'id');
  if (releaseId === undefined) return promotes;
  const current: PromoteEvents = own(promotes, releaseId) ?? { terminals: [] };
  if (isStart) return current.start === undefined ? { ...promotes, [releaseId]: { ...current, start: event } } : promotes;
  return { ...promotes, [releaseId]: { ...current, terminals: [...current.terminals, event] } };
}

/**
 * How many promotes and auto-shutdown ticks an app keeps. The oldest go first, by their own
 * timestamps: a bound applied inside the fold, so what is kept depends only on the events.
 */
export const MAX_PROMOTES = 100;
export const MAX_TICKS = 100;

function firstNanos(events: readonly (AnyWebhookEvent | undefined)[]): bigint {
  let first: bigint | undefined;
  for (const event of events) {
    const nanos = event === undefined ? undefined : timestampNanos(event.timestamp);
    if (nanos !== undefined && (first === undefined || nanos < first)) first = nanos;
  }
  return first ?? 0n;
}

function oldestKey<T>(record: Readonly<Record<string, T>>, keep: string | undefined, age: (value: T) => bigint): string | undefined {
  let oldest: string | undefined;
  let oldestAge = 0n;
  for (const [key, value] of Object.entries(record)) {
    if (key === keep) continue;
    const at = age(value);
    if (oldest === undefined || at < oldestAge || (at === oldestAge && key < oldest)) [oldest, oldestAge] = [key, at];
  }
  return oldest;
}

function without<T>(record: Readonly<Record<string, T>>, key: string | undefined): Readonly<Record<string, T>> {
  if (key === undefined) return record;
  const copy = { ...record };
  delete copy[key];
  return copy;
}

function bounded(folded: Folded): Folded {
  let { state, ticks, promoteEvents } = folded;
  if (Object.keys(promoteEvents).length > MAX_PROMOTES) {
    const drop = oldestKey(promoteEvents, undefined, (promote) => firstNanos([promote.start, ...promote.terminals]));
    promoteEvents = without(promoteEvents, drop);
    state = { ...state, promotes: without(state.promotes, drop) };
  }
  if (Object.keys(ticks).length > MAX_TICKS) {
    // The tick of the current phase stays: its :restored may come days later.
    ticks = without(ticks, oldestKey(ticks, state.autoShutdown.tickId, (tick) => firstNanos([tick.armed, tick.fired, tick.restored])));
  }
  return { state, ticks, promoteEvents };
}

/** One event folded into one app, after every event that sorts before it. Pure: nothing is mutated. */
export function step(folded: Folded, event: AnyWebhookEvent): Folded {
  const before = folded.state;
  const budget = stepBudget(before.budget, event);
  const lastBuild = stepBuild(before.lastBuild, event);
  const lastRelease = stepRelease(before.lastRelease, event);
  const state: AppState = {
    app: before.app,
    autoShutdown: stepAutoShutdown(before.autoShutdown, event),
    breaker: stepBreaker(before.breaker, before.budget, event),
    budget,
    scaleOverrides: stepScaleOverrides(before.scaleOverrides, event),
    triggersOverrides: stepTriggersOverrides(before.triggersOverrides, event),
    promotes: stepPromotes(before.promotes, event),
    ...(lastBuild === undefined ? {} : { lastBuild }),
    ...(lastRelease === undefined ? {} : { lastRelease }),
    updatedAt: event.timestamp,
  };
  const ticks = stepTicks(folded.ticks, event);
  const promoteEvents = stepPromoteEvents(folded.promoteEvents, event);
  const next = { state, ticks, promoteEvents };
  return ticks !== folded.ticks || promoteEvents !== folded.promoteEvents ? bounded(next) : next;
}

/** The app an event is about: `data.app`, or `data.name` for `app:create`. */
export function appOf(event: AnyWebhookEvent): string | undefined {
  return text(event.data, 'app') ?? (event.action === 'app:create' ? text(event.data, 'name') : undefined);
}
