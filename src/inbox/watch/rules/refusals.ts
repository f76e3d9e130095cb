import { formatDuration } from '../incidents.js';
import type { ResolvedRules } from '../options.js';
import { dateOf, plural, type Rule } from './rule.js';

/** What a burst of one refusal code usually means, for the summary. */
const LIKELY_CAUSE: Readonly<Record<string, string>> = {
  signature_mismatch: 'the receiver\'s secrets do not match the rack\'s key (rotate as "new,old"; check secretEncoding)',
  missing_header: 'requests arrive unsigned: the rack stopped signing, or a proxy strips the signature header',
  malformed_header: "the signature header is not the rack's format: a proxy rewrites it, or another sender posts here",
  no_v1_signatures: 'the signature header carries no v1 signature: another sender, or a newer signing scheme',
  timestamp_too_old: 'requests arrive late or replayed, or the clocks disagree (check NTP on both sides)',
  timestamp_too_new: 'the clocks disagree (check NTP on both sides)',
  inbox_unavailable: 'the inbox database could not store deliveries: they were answered 503 and are lost',
};

/**
 * More refusals of one code than its threshold within the window, from the per-minute counts every
 * receiving process writes: one incident per code, resolved when the window's count falls back.
 */
export function refusalsRule(options: NonNullable<ResolvedRules['refusals']>): Rule {
  return {
    name: 'refusals',
    async evaluate({ names, now, query }) {
      const rows = await query(
        `SELECT code, sum(count)::text AS n, min(minute) AS first FROM ${names.refusals}
          WHERE minute > $1 AND minute <= $2 GROUP BY code ORDER BY code`,
        [new Date(now.getTime() - options.windowMs), now],
        'counting refusals',
      );
      return rows.flatMap((row) => {
        const code = String(row['code']);
        const count = Number(row['n']);
        const threshold = options.byCode[code] ?? options.threshold;
        if (count <= threshold) return [];
        const cause = LIKELY_CAUSE[code];
        return [
          {
            severity: 'critical' as const,
            key: `refusals:${code}`,
            since: dateOf(row['first']) ?? now,
            summary:
              `${plural(count, 'delivery', 'deliveries')} refused with ${code} in the last ${formatDuration(options.windowMs)} ` +
              `(bound ${threshold}) on ${names.display}${cause === undefined ? '' : `: ${cause}`}; the rack never retries, so each is lost`,
            fields: { code, count, threshold, windowMs: options.windowMs },
          },
        ];
      });
    },
  };
}
