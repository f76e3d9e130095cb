import { formatTime, type HistorySpan, type OpenAlert, type RefusalCount, WebhookInboxError } from '../../../inbox/facade/index.js';
import { UsageError, flagsHelp, stringFlag, type FlagDeclarations, type Flags } from '../../args.js';
import type { Command } from '../../command.js';
import { oneLine } from '../../format.js';
import { refusalSummary } from './health.js';
import { jsonLine, statsLines } from './render.js';
import { historyLines } from './render-history.js';
import { DATABASE_FLAGS, withInbox } from '../../inbox-session.js';

function historyFlag(flags: Flags): HistorySpan | undefined {
  const text = stringFlag(flags, 'history');
  if (text === undefined || text === 'day' || text === 'week') return text;
  throw new UsageError('--history must be day or week');
}

const FLAGS = {
  ...DATABASE_FLAGS,
  history: {
    type: 'string',
    value: 'day|week',
    help: `also each hour of the last day or week: accepted, duplicate, refused
(n/a without a refusals table), retried and dead as sparklines, the time
from stored to processed, and for a day one line per hour`,
  },
  json: {
    type: 'boolean',
    help: `one JSON object: the fields of inbox.stats(), refusedLastHour
(inbox.refusals(): [{ code, count }], most frequent first), openAlerts
([{ rule, severity, key, summary, since, openedAt }], critical first;
null without an incidents table); with --history, also
"history": { span, hours: [{ hour, accepted, ... p50Ms, p95Ms }] }`,
  },
} as const satisfies FlagDeclarations;

export const stats: Command = {
  name: 'stats',
  summary: 'counts by state, how long the oldest pending delivery has waited, open alerts, and (--history) each hour',
  help: `Usage: rack-webhooks inbox stats --database D [--history day|week] [--json]

Prints how many deliveries are pending, running, done, dead, ignored and duplicate, the total, and how
long ago the oldest pending one was received (a growing age means no worker is keeping up), and
the deliveries refused in the last hour by code (bad signatures, stale timestamps, bodies that do
not parse or are too large: events the rack will not send again), from every receiving process,
and the alerts open now (the incidents inbox.watch() keeps: severity, since when, summary).

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const span = historyFlag(flags);
    const { counts, refused, alerts, history } = await withInbox(flags, {}, async ({ operator, monitor }) => ({
      counts: await operator.stats(),
      // A schema from before refusals were recorded still has counts to show.
      refused: await monitor.refusals().catch((error: unknown) => {
        if (error instanceof WebhookInboxError && error.code === 'inbox_not_migrated') return undefined;
        throw error;
      }),
      alerts: await operator.alerts(),
      history: span === undefined ? undefined : await operator.history(span),
    }));
    const lines =
      flags['json'] === true
        ? [
            jsonLine({
              ...counts,
              refusedLastHour: refused ?? null,
              openAlerts: alerts ?? null,
              ...(history === undefined ? {} : { history }),
            }),
          ]
        : [
            ...statsLines(counts),
            `refused (last hour): ${refusedText(refused)}`,
            ...alertLines(alerts, new Date()),
            ...(history === undefined ? [] : historyLines(history)),
          ];
    process.stdout.write(lines.map((line) => `${line}\n`).join(''));
    return 0;
  },
};

function refusedText(refused: readonly RefusalCount[] | undefined): string {
  if (refused === undefined) return 'not recorded (run rack-webhooks inbox migrate)';
  return refusalSummary(
    refused.reduce((sum, refusal) => sum + refusal.count, 0),
    refused,
  );
}

/** `open alerts: 2` and a line each (severity, since when, summary), or `none`, or n/a on an older schema. */
export function alertLines(alerts: readonly OpenAlert[] | undefined, now: Date): string[] {
  if (alerts === undefined) return ['open alerts: n/a (no incidents table in this schema: run rack-webhooks inbox migrate)'];
  if (alerts.length === 0) return ['open alerts: none'];
  return [
    `open alerts: ${alerts.length}`,
    ...alerts.map((alert) => `  ${alert.severity.padEnd(8)}  since ${formatTime(alert.since, now)}  ${oneLine(alert.summary)}`),
  ];
}
