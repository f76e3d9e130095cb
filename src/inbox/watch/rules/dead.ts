import { formatTime } from '../incidents.js';
import type { ResolvedRules } from '../options.js';
import { dateOf, plural, tally, type Rule } from './rule.js';

/** Ids listed in an alert; the count covers the rest. */
const MAX_IDS = 20;

/**
 * Deliveries that went dead within the window and are still dead: one incident per burst. It
 * opens with the first, takes in those that follow without a new alert, and resolves once they
 * were retried or pruned, or the window passed since the last one went dead.
 */
export function deadRule(options: NonNullable<ResolvedRules['dead']>): Rule {
  return {
    name: 'dead',
    async evaluate({ names, now, query }) {
      // When it went dead: its last attempt's end (a dead row always has attempts; received_at otherwise).
      const rows = await query(
        `SELECT id::text AS id, action, app, died_at FROM (
           SELECT d.id, d.action, d.app,
                  COALESCE((SELECT max(COALESCE(a.finished_at, a.started_at)) FROM ${names.attempts} a WHERE a.delivery_id = d.id),
                           d.received_at) AS died_at
             FROM ${names.deliveries} d WHERE d.id IN (SELECT id FROM ${names.queue} WHERE state = 'dead') AND d.state = 'dead'
         ) dead
         WHERE died_at >= $1 ORDER BY died_at, id`,
        [new Date(now.getTime() - options.windowMs)],
        'looking for dead deliveries',
      );
      if (rows.length === 0) return [];
      const first = dateOf(rows[0]!['died_at'])!;
      const last = dateOf(rows[rows.length - 1]!['died_at'])!;
      const actions = tally(rows.map((row) => String(row['action'])));
      const apps = [...new Set(rows.map((row) => row['app']).filter((app): app is string => typeof app === 'string'))].sort();
      return [
        {
          severity: 'critical',
          key: 'dead',
          since: first,
          summary:
            `${plural(rows.length, 'delivery', 'deliveries')} went dead in ${names.display} since ${formatTime(first, now)} ` +
            `(${actions.text}): fix the handler, then retry them (inbox.retry, the console or \`rack-webhooks inbox retry\`)`,
          fields: {
            count: rows.length,
            deliveryIds: rows.slice(0, MAX_IDS).map((row) => String(row['id'])),
            actions: actions.counts,
            apps,
            lastWentDeadAt: last.toISOString(),
            windowMs: options.windowMs,
          },
        },
      ];
    },
  };
}
