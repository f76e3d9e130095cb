import { readHistory, type HistorySpan } from '../../../inbox/operate/history.js';
import { UsageError, stringFlag, type Flags } from '../../args.js';
import type { Command } from '../../command.js';
import { jsonLine, statsLines } from './render.js';
import { historyLines } from './render-history.js';
import { DATABASE_FLAGS, DATABASE_HELP, withInbox } from './session.js';

function historyFlag(flags: Flags): HistorySpan | undefined {
  const text = stringFlag(flags, 'history');
  if (text === undefined || text === 'day' || text === 'week') return text;
  throw new UsageError('--history must be day or week');
}

export const stats: Command = {
  name: 'stats',
  summary: 'counts by state, how long the oldest pending delivery has waited, and (--history) each hour',
  help: `Usage: rack-webhooks inbox stats --database D [--history day|week] [--json]

Prints how many deliveries are pending, running, done, dead, ignored and duplicate, the total, and how
long ago the oldest pending one was received (a growing age means no worker is keeping up).

${DATABASE_HELP}
  --history day|week      also each hour of the last day or week: accepted, duplicate, refused
                          (n/a without a refusals table), retried and dead as sparklines, the time
                          from stored to processed, and for a day one line per hour
  --json                  one JSON object: the fields of inbox.stats(); with --history, also
                          "history": { span, hours: [{ hour, accepted, ... p50Ms, p95Ms }] }`,
  flags: { ...DATABASE_FLAGS, json: { type: 'boolean' }, history: { type: 'string' } },
  async run(flags) {
    const span = historyFlag(flags);
    const { counts, history } = await withInbox(flags, {}, async ({ inbox, database, names }) => ({
      counts: await inbox.stats(),
      history: span === undefined ? undefined : await readHistory((text, params) => database.query(text, params), names, span),
    }));
    const lines =
      flags['json'] === true
        ? [jsonLine(history === undefined ? counts : { ...counts, history })]
        : [...statsLines(counts), ...(history === undefined ? [] : historyLines(history))];
    process.stdout.write(lines.map((line) => `${line}\n`).join(''));
    return 0;
  },
};
