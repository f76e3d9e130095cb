import { WebhookInboxError } from '../../../inbox/errors.js';
import type { RefusalCount } from '../../../inbox/health/refusals.js';
import type { Command } from '../../command.js';
import { refusalSummary } from './health.js';
import { jsonLine, statsLines } from './render.js';
import { DATABASE_FLAGS, DATABASE_HELP, withInbox } from './session.js';

export const stats: Command = {
  name: 'stats',
  summary: 'counts by state, and how long the oldest pending delivery has waited',
  help: `Usage: rack-webhooks inbox stats --database D [--json]

Prints how many deliveries are pending, running, done, dead, ignored and duplicate, the total, and how
long ago the oldest pending one was received (a growing age means no worker is keeping up), and
the deliveries refused in the last hour by code (bad signatures, stale timestamps, bodies that do
not parse or are too large: events the rack will not send again), from every receiving process.

${DATABASE_HELP}
  --json                  one JSON object: the fields of inbox.stats(), and refusedLastHour
                          (inbox.refusals(): [{ code, count }], most frequent first)`,
  flags: { ...DATABASE_FLAGS, json: { type: 'boolean' } },
  async run(flags) {
    const { counts, refused } = await withInbox(flags, {}, async ({ inbox }) => ({
      counts: await inbox.stats(),
      // A schema from before refusals were recorded still has counts to show.
      refused: await inbox.refusals().catch((error: unknown) => {
        if (error instanceof WebhookInboxError && error.code === 'inbox_not_migrated') return undefined;
        throw error;
      }),
    }));
    const lines =
      flags['json'] === true
        ? [jsonLine({ ...counts, refusedLastHour: refused ?? null })]
        : [...statsLines(counts), `refused (last hour): ${refusedText(refused)}`];
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
