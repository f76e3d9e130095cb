import { MISSED_BEATS } from '../../health/workers.js';
import { watchTables } from '../../schema/table-name.js';
import { formatDuration } from '../incidents.js';
import type { ResolvedRules } from '../options.js';
import { dateOf, plural, type Rule } from './rule.js';

/**
 * No worker has beaten (within {@link MISSED_BEATS} of its own beats) for the bound: nothing runs
 * the deliveries, retries or replays. Measured from when this rule first saw none, or from the open
 * incident's start after a restart (a worker that left with `stop()` leaves no row to date it by).
 */
export function noWorkerRule(options: NonNullable<ResolvedRules['noWorker']>): Rule {
  let noneSince: Date | undefined;
  return {
    name: 'no_worker',
    async evaluate({ names, now, query }) {
      const [row] = await query(
        `SELECT count(*) FILTER (WHERE w.last_seen_at >= $1::timestamptz - make_interval(secs => ${MISSED_BEATS} * w.beat_ms / 1000.0))::int AS live,
                max(w.last_seen_at) AS last_seen,
                (SELECT count(*)::int FROM ${names.queue} WHERE state = 'pending') AS pending,
                (SELECT min(since) FROM ${watchTables(names).incidents} WHERE key = 'no_worker' AND resolved_at IS NULL) AS open_since
           FROM ${names.workers} w`,
        [now],
        'looking for live workers',
      );
      if (Number(row?.['live'] ?? 0) > 0) {
        noneSince = undefined;
        return [];
      }
      noneSince = dateOf(row?.['open_since']) ?? noneSince ?? now;
      const forMs = now.getTime() - noneSince.getTime();
      if (forMs < options.afterMs) return [];
      const pending = Number(row?.['pending'] ?? 0);
      const lastSeen = dateOf(row?.['last_seen']);
      return [
        {
          severity: 'critical',
          key: 'no_worker',
          since: noneSince,
          summary:
            `no live worker on ${names.display} for ${formatDuration(forMs)} (bound ${formatDuration(options.afterMs)}): ` +
            `${plural(pending, 'pending delivery waits', 'pending deliveries wait')} and nothing runs retries or replays; start inbox.work()`,
          fields: { pending, lastWorkerSeenAt: lastSeen?.toISOString() ?? null, afterMs: options.afterMs },
        },
      ];
    },
  };
}
