import type { Command } from '../../command.js';
import { jsonLine, statsLines } from './render.js';
import { DATABASE_FLAGS, DATABASE_HELP, withInbox } from '../../inbox-session.js';

export const stats: Command = {
  name: 'stats',
  summary: 'counts by state, and how long the oldest pending delivery has waited',
  help: `Usage: rack-webhooks inbox stats --database D [--json]

Prints how many deliveries are pending, running, done, dead, ignored and duplicate, the total, and how
long ago the oldest pending one was received (a growing age means no worker is keeping up).

${DATABASE_HELP}
  --json                  one JSON object: the fields of inbox.stats()`,
  flags: { ...DATABASE_FLAGS, json: { type: 'boolean' } },
  async run(flags) {
    const counts = await withInbox(flags, {}, ({ inbox }) => inbox.stats());
    const lines = flags['json'] === true ? [jsonLine(counts)] : statsLines(counts);
    process.stdout.write(lines.map((line) => `${line}\n`).join(''));
    return 0;
  },
};
