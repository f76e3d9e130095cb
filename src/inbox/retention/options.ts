import { MAX_TIMER_MS } from '../../shared/timers.js';
import { wholeNumber } from '../whole-number.js';

const DAY_MS = 86_400_000;

/** The states retention may delete; `running` never. */
export type RetainedState = 'done' | 'ignored' | 'duplicate' | 'dead' | 'pending';
export const RETAINED_STATES: readonly RetainedState[] = ['done', 'ignored', 'duplicate', 'dead', 'pending'];

/**
 * Retention of `inbox.watch()`: per state, the age (in ms since the delivery was received) after
 * which its rows are deleted, `false` for never. Rows go in batches of `batchSize`, one statement
 * each, with `pauseMs` between, by the one watcher holding the lease.
 */
export interface RetentionOptions {
  /** @defaultValue 30 days */
  done?: number | false;
  /** @defaultValue 30 days */
  ignored?: number | false;
  /** @defaultValue 30 days */
  duplicate?: number | false;
  /** Dead deliveries wait for someone to look at them. @defaultValue `false` (never) */
  dead?: number | false;
  /** Pending deliveries have not run yet. @defaultValue `false` (never) */
  pending?: number | false;
  /** Rows per DELETE statement. @defaultValue `1000` */
  batchSize?: number;
  /** Pause between two batches, in ms, so receivers and workers go first. @defaultValue `50` */
  pauseMs?: number;
  /** How often a pass runs, in ms. @defaultValue `3_600_000` (1 hour) */
  intervalMs?: number;
}

/** What a retention pass deleted, per state (and resolved incidents older than the longest age kept). */
export interface RetentionResult {
  /** `false` when another watcher holds the lease: nothing was pruned here. */
  readonly ran: boolean;
  /** Rows deleted per state. */
  readonly deleted: Readonly<Partial<Record<RetainedState, number>>>;
  /** Every row deleted. */
  readonly total: number;
}

const DEFAULT_AGES: Readonly<Record<RetainedState, number | false>> = {
  done: 30 * DAY_MS,
  ignored: 30 * DAY_MS,
  duplicate: 30 * DAY_MS,
  dead: false,
  pending: false,
};

/** Checks the options; `undefined` when retention is off. */
export function resolveRetention(options: RetentionOptions | false | undefined) {
  if (options === false) return undefined;
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new TypeError('retention must be an object such as { done: 30 * 86_400_000 } or false');
  const given = options ?? {};
  const ages = RETAINED_STATES.flatMap((state) => {
    const value = given[state] === undefined ? DEFAULT_AGES[state] : given[state];
    return value === false ? [] : [[state, wholeNumber(`retention.${state}`, value, 0, 1)] as const];
  });
  return {
    ages,
    batchSize: wholeNumber('retention.batchSize', given.batchSize, 1000, 1, 100_000),
    pauseMs: wholeNumber('retention.pauseMs', given.pauseMs, 50, 0, MAX_TIMER_MS),
    intervalMs: wholeNumber('retention.intervalMs', given.intervalMs, 3_600_000, 1, MAX_TIMER_MS),
  };
}

export type ResolvedRetention = NonNullable<ReturnType<typeof resolveRetention>>;
