import type { AnyWebhookEvent } from '../events/types.js';
import { IDLE, stepAutoShutdown } from './auto-shutdown.js';
import { CLOSED, NO_BUDGET, stepBreaker, stepBudget } from './budget.js';
import { stepBuild, stepRelease, stepScaleOverrides, stepTriggersOverrides } from './services.js';
import type { AppState } from './types.js';
import { field } from './read-field.js';

/** The app's state folded up to one event. Promotes live beside it (lifecycle-index.ts): `promotes` stays empty here. */
export interface Folded {
  readonly state: AppState;
}

export function initialFold(app: string): Folded {
  return {
    state: {
      app,
      autoShutdown: IDLE,
      breaker: CLOSED,
      budget: NO_BUDGET,
      scaleOverrides: {},
      triggersOverrides: {},
      promotes: NO_PROMOTES,
      updatedAt: '',
    },
  };
}

const NO_PROMOTES: AppState['promotes'] = {};

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
    promotes: NO_PROMOTES,
    ...(lastBuild === undefined ? {} : { lastBuild }),
    ...(lastRelease === undefined ? {} : { lastRelease }),
    updatedAt: event.timestamp,
  };
  return { state };
}

/** The app an event is about: `data.app`, or `data.name` for `app:create`. */
export function appOf(event: AnyWebhookEvent): string | undefined {
  return field(event.data, 'app') ?? (event.action === 'app:create' ? field(event.data, 'name') : undefined);
}
