import { flagsHelp, type FlagDeclarations } from '../../args.js';
import type { Command } from '../../command.js';
import { idArgument } from './filter-flags.js';
import { deliveryDetail, detailJson, jsonLine } from './render.js';
import { DATABASE_FLAGS, withInbox } from '../../inbox-session.js';

const FLAGS = {
  ...DATABASE_FLAGS,
  json: {
    type: 'boolean',
    help: `one JSON object: the fields of inbox.get(), the body as received
("body", or "bodyBase64" when it is not UTF-8) and the signature header`,
  },
} as const satisfies FlagDeclarations;

export const show: Command = {
  name: 'show',
  summary: 'one delivery in full: event, verification facts, attempts and errors',
  help: `Usage: rack-webhooks inbox show <id> --database D [--json]

Prints everything stored about one delivery: its state, action, app and tick_id, the event's
time, when it was received, the signature's t and which key matched, its attempts (worker,
outcome, error), then the event as indented JSON. The signature header itself is only shown
with --json (as "signature"): the human view says it is there and how long it is.

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  positionals: 1,
  async run(flags, positionals) {
    const id = idArgument(positionals[0], 'rack-webhooks inbox show <id> --database D');
    const delivery = await withInbox(flags, {}, ({ operator }) => operator.get(id));
    if (delivery === undefined) throw new Error(`no delivery with id ${id}`);
    const lines = flags['json'] === true ? [jsonLine(detailJson(delivery))] : deliveryDetail(delivery);
    process.stdout.write(lines.map((line) => `${line}\n`).join(''));
    return 0;
  },
};
