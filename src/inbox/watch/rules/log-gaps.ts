import { timestampNanos } from '../../../events/compare.js';
import { findLogGaps, gapIsCertain, type LogGap, type LogGapRule, type LoggedEvent } from '../../../state/log-gaps.js';
import type { ListPage } from '../../types.js';
import type { Finding } from '../incidents.js';
import { formatDuration, formatTime } from '../incidents.js';
import type { ResolvedRules } from '../options.js';
import { deliveryPages, type Rule } from './rule.js';

const SHUTDOWN = 'app:budget:auto-shutdown:';
/** The actions the rules read: evidence and partners; never the high-volume `:noop`. */
const GAP_ACTIONS = [
  'build:create',
  'release:create',
  'release:promote',
  'app:promote:completed',
  'app:promote:errored',
  'app:promote:cancelled',
  'app:create',
  ...['armed', 'fired', 'failed', 'cancelled', 'restored', 'expired'].map((name) => SHUTDOWN + name),
];

/** What each rule says went missing, for people. */
const TOLD: Readonly<Record<LogGapRule, (gap: LogGap) => string>> = {
  build_without_release: (gap) => `release:create of ${gap.id} never arrived, though build:create says the build made it`,
  promote_without_outcome: (gap) =>
    `no outcome (app:promote:completed, errored or cancelled) for ${release(gap)} ${formatDuration(gap.boundMs)} after its release:promote: ` +
    "it was lost, or the rack's api restarted or the app was deleted during the rollout",
  outcome_without_promote: (gap) => `release:promote of ${release(gap)} never arrived, though its app:promote outcome did`,
  app_create_without_promote: () => `release:promote of the app's creation (id "") never arrived, though app:create did`,
  shutdown_without_armed: (gap) => `auto-shutdown :armed of ${gap.id} never arrived, though later events of that countdown did`,
  shutdown_end_without_shutdown: (gap) =>
    `auto-shutdown :fired or :failed of ${gap.id} never arrived, though its :expired or :restored did`,
};
const release = (gap: LogGap) => (gap.id === '' ? `the app's creation (id "")` : `release ${gap.id}`);

function findingOf(gap: LogGap, now: Date, options: NonNullable<ResolvedRules['logGaps']>): Omit<Finding, 'rule'> {
  const first = gap.evidence[0]!;
  const firstAt = new Date(Number((timestampNanos(first.eventTime) ?? 0n) / 1_000_000n));
  const more = gap.evidence.length > 1 ? ` and ${gap.evidence.length - 1} more` : '';
  return {
    severity: gapIsCertain(gap.rules) ? 'critical' : 'warning',
    key: `log_gap:${gap.key}`,
    since: new Date(gap.sinceMs),
    summary:
      `${gap.app}: ${TOLD[gap.rules[0]!](gap)} (${first.action} delivery ${first.deliveryId} at ${formatTime(firstAt, now)}${more}); ` +
      'the rack never sends it again',
    fields: {
      app: gap.app,
      id: gap.id,
      missing: gap.missing,
      gapRules: gap.rules,
      evidence: gap.evidence,
      boundMs: gap.boundMs,
      lookbackMs: options.lookbackMs,
    },
  };
}

/**
 * Events the log implies the rack sent but this inbox never stored (rack-api.md section 4), read
 * from the inbox's deliveries of the lookback (event time): one incident per missing event, open
 * once its evidence has waited its bound, resolved when the event arrives, however late. The
 * horizon never reaches back past what retention keeps (`keptMs`), nor past what was read.
 */
export function logGapsRule(options: NonNullable<ResolvedRules['logGaps']>, keptMs: number | undefined): Rule {
  return {
    name: 'log_gap',
    async evaluate(context) {
      const { now } = context;
      const lookbackMs = keptMs === undefined ? options.lookbackMs : Math.min(options.lookbackMs, keptMs - options.graceMs);
      // Retention shorter than the grace period: nothing stays long enough to be judged.
      if (lookbackMs <= 0) return [];
      let horizonMs = now.getTime() - lookbackMs;
      const events: LoggedEvent[] = [];
      let last: ListPage | undefined;
      for await (const page of deliveryPages(context, { action: GAP_ACTIONS, from: new Date(horizonMs), order: 'desc' })) {
        for (const delivery of page.deliveries) {
          if (delivery.event !== undefined)
            events.push({ event: delivery.event, deliveryId: delivery.id, receivedAtMs: delivery.receivedAt.getTime() });
        }
        last = page;
      }
      // The bound cut the reading short, newest first: what is older than the oldest read may hold a partner.
      if (last?.next !== undefined) horizonMs = Number(last.deliveries.at(-1)!.eventNanos / 1_000_000n) + 1;
      const gaps = findLogGaps(events, {
        nowMs: now.getTime(),
        horizonMs,
        graceMs: options.graceMs,
        promoteOutcomeMs: options.promoteOutcomeMs,
      });
      return gaps.map((gap) => findingOf(gap, now, options));
    },
  };
}
