import { UsageError, flagsHelp, stringFlag, type FlagDeclarations, type Flags } from '../../args.js';
import type { Command } from '../../command.js';
import { FILTER_FLAGS, filterFromFlags } from './filter-flags.js';
import { deliveryJson, deliveryTable, jsonLine } from './render.js';
import { DATABASE_FLAGS, withInbox } from '../../inbox-session.js';

const MAX_LIMIT = 1000;
/** The inbox's cursor: `<event nanoseconds>.<id>`. */
const CURSOR = /^-?\d{1,20}\.[1-9]\d{0,18}$/;

function limitFlag(flags: Flags): number {
  const text = stringFlag(flags, 'limit');
  if (text === undefined) return 100;
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1 || Number(text) > MAX_LIMIT)
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}, got ${JSON.stringify(text)}`);
  return Number(text);
}

function orderFlag(flags: Flags): 'asc' | 'desc' {
  const text = stringFlag(flags, 'order') ?? 'asc';
  if (text !== 'asc' && text !== 'desc') throw new UsageError(`--order must be asc or desc, got ${JSON.stringify(text)}`);
  return text;
}

function afterFlag(flags: Flags): string | undefined {
  const text = stringFlag(flags, 'after');
  if (text !== undefined && !CURSOR.test(text)) throw new UsageError('--after must be the "next" cursor a previous page printed');
  return text;
}

const FLAGS = {
  ...DATABASE_FLAGS,
  ...FILTER_FLAGS,
  limit: { type: 'string', value: 'N', help: `at most N deliveries (default 100, at most ${MAX_LIMIT})` },
  after: { type: 'string', value: 'CURSOR', help: 'the page after the one that printed this cursor' },
  order: { type: 'string', value: 'O', help: 'asc (default: oldest event first) or desc (newest first)' },
  json: { type: 'boolean', help: 'one JSON object per line, the fields of inbox.list()' },
} as const satisfies FlagDeclarations;

export const list: Command = {
  name: 'list',
  summary: 'the deliveries, oldest event first, filtered and paged',
  help: `Usage: rack-webhooks inbox list --database D [--state dead] [--action app:budget:*] [--json]

Prints the stored deliveries in event-time order (to the nanosecond, then arrival): a header,
then one line each (id, state, attempts, event time, action, app), then "next: --after CURSOR"
when there are more. With --json, one JSON object per delivery per line on stdout, and the
cursor on stderr.

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const filter = filterFromFlags(flags);
    const limit = limitFlag(flags);
    const order = orderFlag(flags);
    const after = afterFlag(flags);
    const page = await withInbox(flags, {}, ({ operator }) =>
      operator.list({ ...filter, limit, order, ...(after === undefined ? {} : { after }) }),
    );
    const json = flags['json'] === true;
    const lines = json
      ? page.deliveries.map((delivery) => jsonLine(deliveryJson(delivery)))
      : page.deliveries.length === 0
        ? ['no deliveries']
        : deliveryTable(page.deliveries);
    process.stdout.write(lines.map((line) => `${line}\n`).join(''));
    if (page.next !== undefined) (json ? process.stderr : process.stdout).write(`next: --after ${page.next}\n`);
    return 0;
  },
};
