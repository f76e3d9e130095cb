import { failedHealth, formatTime, type InboxHealth, type WorkerInfo } from '../../../inbox/facade/index.js';
import { flagsHelp, secondsFlag, UsageError, type FlagDeclarations } from '../../args.js';
import type { Command } from '../../command.js';
import { formatAge, oneLine } from '../../format.js';
import { jsonLine } from './render.js';
import { DATABASE_FLAGS, withInbox } from '../../inbox-session.js';

/** The exit codes a probe reads. */
const EXIT = { ok: 0, warning: 0, unhealthy: 1, unreachable: 2 } as const;

const FLAGS = {
  ...DATABASE_FLAGS,
  'max-pending-age': {
    type: 'string',
    value: 'S',
    help: `unhealthy when the oldest pending delivery was received more than S
seconds ago (default 900)`,
  },
  json: { type: 'boolean', help: 'one JSON object: the fields of inbox.health()' },
} as const satisfies FlagDeclarations;

export const health: Command = {
  name: 'health',
  summary: 'is the inbox healthy: database, schema, live workers, backlog, dead, refusals, log gaps (exit code for probes)',
  help: `Usage: rack-webhooks inbox health --database D [--max-pending-age SECONDS] [--json]

Checks the inbox as inbox.health() does: the database answers, the schema is the one this package
needs, which workers are live (a worker that missed 3 heartbeats is gone), how long the oldest
pending delivery has waited, how many are dead, what was refused in the last hour, and the log
gaps inbox.watch() found open: events the rack sent that this inbox never stored (a build's
release:create, a promote's outcome, a countdown's :armed, ...), with the deliveries that say so,
and what inbox.watch({ reconcile }) keeps open: the events the rack's API proves it sent that never
arrived (with the proof), and a scheduled reconcile that fails or whose token is about to lapse.

Exit codes (for a probe or a cron job):
  0  ok, or warning (dead deliveries, refusals, log or reconcile gaps, no worker while nothing waits): still running
  1  unhealthy: schema missing or behind, deliveries waiting with no live worker, or the oldest
     pending delivery older than --max-pending-age
  2  could not check: the database cannot be reached (or is open in another process, for a
     PGlite directory), or a usage error

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const maxAge = secondsFlag(flags, 'max-pending-age');
    if (maxAge === 0) throw new UsageError('--max-pending-age must be at least 1 second');
    let report: InboxHealth;
    try {
      report = await withInbox(flags, {}, ({ monitor }) => monitor.health(maxAge === undefined ? {} : { maxPendingAgeMs: maxAge * 1000 }));
    } catch (error) {
      if (error instanceof UsageError) throw error;
      // Opening failed: the server, the URL's database, or a PGlite directory another process holds.
      report = failedHealth(error instanceof Error ? error.message : String(error), false);
    }
    const lines = flags['json'] === true ? [jsonLine(report)] : healthLines(report);
    process.stdout.write(lines.map((line) => `${line}\n`).join(''));
    return EXIT[report.status];
  },
};

function workerLine(worker: WorkerInfo, now: number): string {
  const seen = formatAge(Math.max(0, now - worker.lastSeenAt.getTime()));
  return (
    `  ${oneLine(worker.id)}  ${worker.live ? 'live' : 'GONE'}  ${oneLine(worker.host)} pid ${worker.pid}  ` +
    `running ${worker.running}/${worker.concurrency}${worker.order === 'per-app' ? ' per-app' : ''}  last seen ${seen} ago`
  );
}

/** For people: the verdict and its reasons first, then one fact per line. */
export function healthLines(report: InboxHealth): string[] {
  const lines = [`status: ${report.status}`, ...report.reasons.map((reason) => `  - ${oneLine(reason)}`)];
  if (!report.database.reachable) return lines;
  const { schema, workers } = report;
  const schemaText =
    schema.version === null
      ? `not migrated (this package needs version ${schema.expected})`
      : `version ${schema.version}${schema.current ? ' (current)' : schema.newerThanPackage ? ` (newer than this package's ${schema.expected})` : ` (this package needs ${schema.expected})`}`;
  const refused = report.refusalsLastHour;
  const now = report.checkedAt.getTime();
  lines.push(
    `database        reachable`,
    `schema          ${schemaText}`,
    `workers         ${workers.live} live${workers.gone > 0 ? `, ${workers.gone} gone` : ''}`,
    ...workers.list.map((worker) => workerLine(worker, now)),
    `oldest pending  ${report.oldestPendingAgeMs === null ? 'none' : `received ${formatAge(report.oldestPendingAgeMs)} ago`}`,
    `dead            ${report.dead}`,
    `refused (1 h)   ${refusalSummary(refused.total, refused.byCode)}`,
    ...gapLines(report),
    ...reconcileLines(report),
  );
  return lines;
}

/** `log gaps  none`, or their count and one line each: severity, since when, summary, the evidence's delivery ids. */
function gapLines({ logGaps, checkedAt }: InboxHealth): string[] {
  if (logGaps === null) return ['log gaps        n/a (no incidents table in this schema: run rack-webhooks inbox migrate)'];
  if (logGaps.length === 0) return ['log gaps        none open (found by inbox.watch())'];
  return [
    `log gaps        ${logGaps.length} open`,
    ...logGaps.map(
      (gap) =>
        `  ${gap.severity.padEnd(8)}  since ${formatTime(gap.since, checkedAt)}  ${oneLine(gap.summary)}` +
        `  [deliveries ${gap.evidence.map((evidence) => evidence.deliveryId).join(', ')}]`,
    ),
  ];
}

/** The scheduled reconcile's trouble and open gaps, each with its proof (and the delivery it was recorded as). */
function reconcileLines({ reconcile, checkedAt }: InboxHealth): string[] {
  // Nothing to say without a scheduled reconcile (most inboxes): no line at all, rather than a "none" to read past.
  if (reconcile === null || (reconcile.gaps.length === 0 && reconcile.problems.length === 0)) return [];
  const lines = reconcile.problems.map(
    (problem) => `reconcile       ${problem.rule === 'reconcile_failed' ? 'FAILING' : 'token'}  ${oneLine(problem.summary)}`,
  );
  if (reconcile.gaps.length === 0) return lines;
  return [
    ...lines,
    `reconcile gaps  ${reconcile.gaps.length} open`,
    ...reconcile.gaps.map((gap) => {
      const { route, field, value } = gap.evidence;
      const recorded = gap.recorded === null ? '' : `  [recorded as delivery ${gap.recorded.id}]`;
      return (
        oneLine(
          `  ${gap.action}${gap.status === null ? '' : ` (${gap.status})`}  app=${gap.app}  id=${gap.id}  sent ${formatTime(gap.since, checkedAt)}  proof: GET ${route} ${field}=${value}`,
        ) + recorded
      );
    }),
  ];
}

/** `none`, or `41: signature_mismatch 40, invalid_json 1`. */
export function refusalSummary(total: number, byCode: readonly { code: string; count: number }[]): string {
  return total === 0 ? 'none' : `${total}: ${byCode.map((refusal) => `${oneLine(refusal.code)} ${refusal.count}`).join(', ')}`;
}
