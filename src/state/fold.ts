import type { AnyWebhookEvent } from '../events/types.js';
import { IDLE, stepAutoShutdown } from './auto-shutdown.js';
import { CLOSED, NO_BUDGET, stepBreaker, stepBudget } from './budget.js';
import { stepBuild, stepPromotes, stepRelease, stepScaleOverrides, stepTriggersOverrides } from './services.js';
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

const TICK_ROLES: Readonly<Record<string, keyof TickEvents>> = {
  'app:budget:auto-shutdown:armed': 'armed',
  'app:budget:auto-shutdown:fired': 'fired',
  'app:budget:auto-shutdown:restored': 'restored',
};

function text(data: unknown, key: string): string | undefined {
  const value = (data as Record<string, unknown>)[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function stepTicks(ticks: Folded['ticks'], event: AnyWebhookEvent): Folded['ticks'] {
  const role = TICK_ROLES[event.action];
  const tickId = role === undefined ? undefined : text(event.data, 'tick_id');
  // A dry run is not the real lifecycle (stepAutoShutdown ignores it too): it neither makes nor hides an anomaly.
  const dryRun = (event.data as Record<string, unknown>)['dry_run'];
  if (dryRun === 'true' || dryRun === true) return ticks;
  if (role === undefined || tickId === undefined || ticks[tickId]?.[role] !== undefined) return ticks;
  return { ...ticks, [tickId]: { ...ticks[tickId], [role]: event } };
}

function stepPromoteEvents(promotes: Folded['promoteEvents'], event: AnyWebhookEvent): Folded['promoteEvents'] {
  const isStart = event.action === 'release:promote';
  if (!isStart && !event.action.startsWith('app:promote:')) return promotes;
  const releaseId = text(event.data, 'id');
  if (releaseId === undefined) return promotes;
  const current: PromoteEvents = promotes[releaseId] ?? { terminals: [] };
  if (isStart) return current.start === undefined ? { ...promotes, [releaseId]: { ...current, start: event } } : promotes;
  return { ...promotes, [releaseId]: { ...current, terminals: [...current.terminals, event] } };
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
  return { state, ticks: stepTicks(folded.ticks, event), promoteEvents: stepPromoteEvents(folded.promoteEvents, event) };
}

/** The app an event is about: `data.app`, or `data.name` for `app:create`. */
export function appOf(event: AnyWebhookEvent): string | undefined {
  return text(event.data, 'app') ?? (event.action === 'app:create' ? text(event.data, 'name') : undefined);
}
