import { formatDuration, formatTime } from '../incidents.js';
import type { ResolvedRules } from '../options.js';
import { dateOf, plural, type Rule } from './rule.js';

/**
 * Nothing accepted for the bound, while the rack was sending before (at least `minDeliveries` in
 * the lookback before the last one). The reconciler's `:noop` events keep a healthy rack audible,
 * so a quiet table means the rack, the network or the keys stopped deliveries reaching the inbox.
 */
export function silenceRule(options: NonNullable<ResolvedRules['silence']>): Rule {
  return {
    name: 'silence',
    async evaluate({ names, now, query }) {
      // One statement: `last` read back into JavaScript would lose its microseconds.
      const [latest] = await query(
        `SELECT last, (SELECT count(*)::int FROM ${names.deliveries}
                        WHERE received_at > last - make_interval(secs => $1::float8 / 1000)) AS before
           FROM (SELECT max(received_at) AS last FROM ${names.deliveries}) newest`,
        [options.lookbackMs],
        'looking for silence',
      );
      const last = dateOf(latest?.['last']);
      if (last === undefined) return [];
      const quietMs = now.getTime() - last.getTime();
      if (quietMs < options.afterMs) return [];
      const sentBefore = Number(latest!['before'] ?? 0);
      if (sentBefore < options.minDeliveries) return [];
      return [
        {
          severity: 'warning',
          key: 'silence',
          since: last,
          summary:
            `no delivery accepted by ${names.display} for ${formatDuration(quietMs)} (the last at ${formatTime(last, now)}, ` +
            `${plural(sentBefore, 'delivery', 'deliveries')} in the ${formatDuration(options.lookbackMs)} before): ` +
            'is the rack sending, and do its requests reach this receiver and pass verification?',
          fields: { lastReceivedAt: last.toISOString(), quietMs, deliveriesBefore: sentBefore, afterMs: options.afterMs },
        },
      ];
    },
  };
}
