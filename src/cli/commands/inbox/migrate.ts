import { flagsHelp, type FlagDeclarations } from '../../args.js';
import type { Command } from '../../command.js';
import { DATABASE_FLAGS, withInbox } from '../../inbox-session.js';

const FLAGS = {
  ...DATABASE_FLAGS,
} as const satisfies FlagDeclarations;

export const migrate: Command = {
  name: 'migrate',
  summary: 'create or update the inbox schema (idempotent)',
  help: `Usage: rack-webhooks inbox migrate --database D [--table T]

Applies the inbox schema's missing migrations, under an advisory lock (safe while other
processes start), and prints the versions it applied. A PGlite directory that does not exist
yet is created. The same schema ships as sql/inbox.sql for your own migration tool.

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const { result, table } = await withInbox(flags, { create: true }, async ({ inbox }) => ({
      result: await inbox.migrate(),
      table: inbox.table,
    }));
    const applied =
      result.applied.length === 0
        ? 'nothing to apply'
        : `applied version${result.applied.length === 1 ? '' : 's'} ${result.applied.join(', ')}`;
    process.stdout.write(`${table}: ${applied}; schema version ${result.version}\n`);
    return 0;
  },
};
