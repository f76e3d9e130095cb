/** `rack-webhooks console`: the console's page over an inbox, until Ctrl-C. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeInbox } from '../../inbox/facade/index.js';
import { startConsole } from '../../console/server/start-console.js';
import { isLoopback } from '../../console/server/auth.js';
import { UsageError, flagsHelp, stringFlag, type FlagDeclarations, type Flags } from '../args.js';
import type { Command } from '../command.js';
import { openDatabase, scrub } from '../open-database.js';
import { DATABASE_FLAGS, databaseFailure, tableNames, targetFlag } from '../inbox-session.js';

function portFlag(flags: Flags): number {
  const text = stringFlag(flags, 'port') ?? '0';
  if (!/^\d+$/.test(text) || Number(text) > 65535) throw new UsageError(`--port must be 0 to 65535, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** The package's own directory (dist/cli.js when installed, src/cli/commands in a checkout). */
function packageRoot(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, 'package.json')) && dirname(directory) !== directory) directory = dirname(directory);
  return directory;
}

function kilobytes(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

const FLAGS = {
  ...DATABASE_FLAGS,
  host: {
    type: 'string',
    value: 'H',
    help: `the address to listen on (default 127.0.0.1); another address makes the
page reachable from other machines, over plain HTTP`,
  },
  port: { type: 'string', value: 'P', help: 'the port (default 0: a free one)' },
} as const satisfies FlagDeclarations;

export const consoleCommand: Command = {
  name: 'console',
  summary: 'a local web page over an inbox: deliveries, apps, retry and replay',
  help: `Usage: rack-webhooks console --database D [--table T] [--host 127.0.0.1] [--port 0]

Serves a web page over an inbox: every delivery (filters, live updates), one delivery in full
(the event, the verification facts, the attempts and their errors), each app's state and a
timeline of its lifecycle events, counts by state, and Retry / Replay buttons. Runs until Ctrl-C.

It prints a URL carrying a random access token; without the token every request gets 401. The
token becomes a cookie on the first visit. Nothing is loaded from another host, and no secret,
key or signature is shown.

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const target = targetFlag(flags, 'database');
    const names = tableNames(flags);
    // `[::1]` as in a URL is `::1` to listen().
    const host = (stringFlag(flags, 'host') ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1');
    if (host === '') throw new UsageError('--host is empty: pass an address such as 127.0.0.1');
    const port = portFlag(flags);
    const database = await openDatabase(target, { create: false, poolSize: 4 });
    let running;
    try {
      const { operator, monitor } = composeInbox({ database: database.client, table: names.display });
      await operator.stats(); // an unmigrated or unreachable database fails here, with the command to run
      const root = packageRoot();
      running = await startConsole({
        operator,
        monitor,
        databaseShown: target.shown,
        assetsDirectory: join(root, 'dist', 'console'),
        schemasDirectory: join(root, 'schemas', 'events'),
        host,
        port,
        onError: (error) =>
          process.stderr.write(`rack-webhooks console: ${scrub(error instanceof Error ? error.message : String(error), target)}\n`),
      });
    } catch (error) {
      await database.close().catch(() => {});
      throw databaseFailure(error, target, names);
    }
    let stopped = () => {};
    const done = new Promise<void>((resolve) => (stopped = resolve));
    let stopping = false;
    // The first Ctrl-C waits for requests in flight (a query on a locked table may take a while);
    // the second does not wait.
    const stop = () => {
      if (stopping) process.exit(130);
      stopping = true;
      process.stderr.write('rack-webhooks console: stopping (Ctrl-C again to quit at once)\n');
      stopped();
    };
    process.on('SIGINT', stop).on('SIGTERM', stop);
    if (!isLoopback(host)) {
      process.stderr.write(
        `rack-webhooks console: warning: listening on ${host}, not 127.0.0.1: anyone who can reach it and has the URL can retry and replay deliveries, and the token travels over plain HTTP\n`,
      );
    }
    process.stdout.write(`rack-webhooks console: ${names.display} at ${target.shown}\n`);
    process.stdout.write(`open ${running.url}\n`);
    process.stdout.write(`the token in that URL is the key to the page; page ${kilobytes(running.pageBytes.gzip)} gzip; Ctrl-C to stop\n`);
    await done;
    process.off('SIGINT', stop).off('SIGTERM', stop);
    await running.close();
    await database.close();
    return 0;
  },
};
