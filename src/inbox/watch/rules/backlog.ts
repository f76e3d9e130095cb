import { formatDuration } from '../incidents.js';
import type { ResolvedRules } from '../options.js';
import { dateOf, plural, type Rule } from './rule.js';

/**
 * The oldest due delivery waited past the bound. Due, not merely pending: a delivery waiting for
 * its retry's backoff is on schedule; one that has been due for minutes is not being run.
 */
export function backlogRule(options: NonNullable<ResolvedRules['backlog']>): Rule {
  return {
    name: 'backlog',
    async evaluate({ names, now, query }) {
      const [row] = await query(
        `SELECT min(q.run_at) AS oldest_due, min(d.received_at) AS oldest_received, count(*)::int AS due
           FROM ${names.queue} AS q JOIN ${names.deliveries} AS d ON d.id = q.id WHERE q.state = 'pending' AND q.run_at <= $1`,
        [now],
        'measuring the backlog',
      );
      const oldestDue = dateOf(row?.['oldest_due']);
      if (oldestDue === undefined) return [];
      const waitedMs = now.getTime() - oldestDue.getTime();
      if (waitedMs < options.afterMs) return [];
      const due = Number(row!['due']);
      return [
        {
          severity: 'warning',
          key: 'backlog',
          since: oldestDue,
          summary:
            `${plural(due, 'delivery is', 'deliveries are')} due in ${names.display} and the oldest has waited ` +
            `${formatDuration(waitedMs)} (bound ${formatDuration(options.afterMs)}): workers are stopped, stuck or too few`,
          fields: {
            due,
            oldestDueMs: waitedMs,
            oldestReceivedAt: dateOf(row!['oldest_received'])?.toISOString() ?? null,
            afterMs: options.afterMs,
          },
        },
      ];
    },
  };
}
