import { createRackState } from '../../../state/create-rack-state.js';
import { formatDuration, formatTime } from '../incidents.js';
import type { ResolvedRules } from '../options.js';
import { deliveryPages, type Rule } from './rule.js';

/** The events that move an auto-shutdown lifecycle (not the high-volume `:noop`, nor information-only ones). */
const LIFECYCLE_ACTIONS = ['armed', 'fired', 'failed', 'cancelled', 'restored', 'expired', 'dismissed'].map(
  (name) => `app:budget:auto-shutdown:${name}`,
);

/**
 * An armed countdown that the rack state says should have ended: no `:fired`, `:failed` or
 * `:cancelled` `graceMs` after its `expected_shutdown_at`. The state is folded with
 * `createRackState` from the inbox's lifecycle deliveries of the lookback (event time), so arrival
 * order, copies and late events count exactly as they do for the application.
 */
export function overdueLifecycleRule(options: NonNullable<ResolvedRules['overdueLifecycle']>): Rule {
  return {
    name: 'overdue_lifecycle',
    async evaluate(context) {
      const { now } = context;
      const state = createRackState();
      const from = new Date(now.getTime() - options.lookbackMs);
      for await (const { deliveries } of deliveryPages(context, { action: LIFECYCLE_ACTIONS, from }))
        for (const delivery of deliveries) if (delivery.event !== undefined) state.apply(delivery.event);
      return state.apps().flatMap((app) => {
        const lifecycle = app.autoShutdown;
        if (lifecycle.phase !== 'armed' || lifecycle.expectedShutdownAt === undefined) return [];
        const expected = new Date(lifecycle.expectedShutdownAt);
        if (Number.isNaN(expected.getTime())) return [];
        const lateMs = now.getTime() - expected.getTime();
        if (lateMs < options.graceMs) return [];
        const countdown = lifecycle.tickId ?? lifecycle.since ?? lifecycle.expectedShutdownAt;
        return [
          {
            severity: 'warning' as const,
            key: `overdue_lifecycle:${app.app}:${countdown}`,
            since: expected,
            summary:
              `${app.app}: auto-shutdown armed${lifecycle.tickId === undefined ? '' : ` (${lifecycle.tickId})`} was due to shut down at ` +
              `${formatTime(expected, now)}; no fired, failed or cancelled ${formatDuration(lateMs)} later: ` +
              'the rack may have stalled, or its outcome never reached this receiver',
            fields: {
              app: app.app,
              lifecycle: 'auto-shutdown',
              phase: lifecycle.phase,
              tickId: lifecycle.tickId ?? null,
              armedAt: lifecycle.since ?? null,
              expectedShutdownAt: lifecycle.expectedShutdownAt,
              lateMs,
              graceMs: options.graceMs,
            },
          },
        ];
      });
    },
  };
}
