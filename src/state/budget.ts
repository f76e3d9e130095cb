import type { AnyWebhookEvent } from '../events/types.js';
import type { BreakerState, BudgetState } from './types.js';
import { field } from './read-field.js';

type Data = Readonly<Record<string, unknown>>;

/** Drops the keys whose value is undefined: an optional field is absent, never `undefined`. */
function defined(value: Record<string, string | undefined>): BudgetState {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as BudgetState;
}

export const NO_BUDGET: BudgetState = {};
export const CLOSED: BreakerState = { state: 'closed' };

export function stepBudget(budget: BudgetState, event: AnyWebhookEvent): BudgetState {
  const data = event.data as Data;
  switch (event.action) {
    case 'app:budget:set':
      return defined({
        ...budget,
        capUsd: field(data, 'new_cap_usd'),
        atCapAction: field(data, 'new_action'),
        alertThresholdPercent: field(data, 'new_pct'),
        setAt: event.timestamp,
        setBy: field(data, 'ack_by') ?? field(data, 'actor'),
        clearedAt: undefined,
      });
    case 'app:budget:clear':
      return defined({
        lastThresholdAt: budget.lastThresholdAt,
        lastCapAt: budget.lastCapAt,
        lastResetAt: budget.lastResetAt,
        clearedAt: event.timestamp,
      });
    case 'app:budget:threshold':
      return { ...budget, lastThresholdAt: event.timestamp };
    case 'app:budget:cap':
      return { ...budget, lastCapAt: event.timestamp };
    case 'app:budget:reset':
      return { ...budget, lastResetAt: event.timestamp };
    default:
      return budget;
  }
}

/**
 * The deploy breaker: a cap crossing trips it unless the budget as last set names another at-cap
 * action (alert-only, auto-shutdown); a breaker-cleared, a reset or a clear closes it.
 */
export function stepBreaker(breaker: BreakerState, budgetBefore: BudgetState, event: AnyWebhookEvent): BreakerState {
  switch (event.action) {
    case 'app:budget:cap': {
      const action = budgetBefore.atCapAction;
      if (action !== undefined && action !== 'block-new-deploys') return breaker;
      return breaker.state === 'tripped' ? breaker : { state: 'tripped', since: event.timestamp, by: event.action };
    }
    case 'app:budget:breaker-cleared':
    case 'app:budget:reset':
    case 'app:budget:clear':
      return breaker.state === 'closed' ? breaker : { state: 'closed', since: event.timestamp, by: event.action };
    default:
      return breaker;
  }
}
