/**
 * Dispatches to a command and turns every failure into one line and an exit code. Kept apart from
 * main.ts, which only runs it, so the tests can also run it in-process (and measure its coverage).
 */
import { version } from '../../package.json';
import { WebhookVerificationError } from '../signature/errors.js';
import { UsageError, parseCommandLine } from './args.js';
import type { Command, CommandGroup } from './command.js';
import { consoleCommand } from './commands/console.js';
import { inbox } from './commands/inbox.js';
import { keygen } from './commands/keygen.js';
import { listen } from './commands/listen.js';
import { send } from './commands/send.js';
import { sign } from './commands/sign.js';
import { verify } from './commands/verify.js';
import { flagSpec } from './flag-help.js';
import { oneLine } from './format.js';
import { nearest } from './suggest.js';

/** Every command, in the order `--help` lists them (the usage tests loop over this list). */
export const COMMANDS: readonly (Command | CommandGroup)[] = [keygen, sign, verify, send, listen, inbox, consoleCommand];

function isGroup(command: Command | CommandGroup): command is CommandGroup {
  return 'subcommands' in command;
}

function overview(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return `Usage: rack-webhooks <command> [flags]

Sign, verify, send and receive the rack's webhooks.

${COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`).join('\n')}

Run "rack-webhooks <command> --help" for a command's flags ("rack-webhooks inbox --help" lists
the inbox's subcommands). Keys can come from --key, --key-file or $RACK_WEBHOOK_SECRETS.
Exit codes: 0 ok, 1 verification, delivery or database failed, 2 usage error.
`;
}

/** The help for `help <command> [<subcommand>]`; the overview for anything else. */
function helpTopic(names: readonly string[]): string {
  const topic = COMMANDS.find((command) => command.name === names[0]);
  if (topic === undefined) return overview();
  if (!isGroup(topic)) return `${topic.help}\n`;
  const sub = topic.subcommands.find((command) => command.name === names[1]);
  return `${(sub ?? topic).help}\n`;
}

/** The name is echoed only when it looks like a word: a pasted key must not end up in a log. */
function unknownName(name: string, candidates: readonly string[], what: string, prefix: string, listedBy: string): string {
  const shown = /^[\w-]{1,20}$/.test(name) ? ` "${name}"` : '';
  const [guess] = nearest(name, candidates, 1);
  return `${prefix}: unknown ${what}${shown}; did you mean "${guess}"? (${listedBy} lists them)\n`;
}

/** The receiver's own configuration (a missing or malformed key) and bad option values are usage errors. */
function isUsageError(error: unknown): boolean {
  return error instanceof UsageError || error instanceof RangeError || (error instanceof WebhookVerificationError && error.status === 500);
}

export async function runCli(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    process.stderr.write(overview());
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(helpTopic(rest));
    return 0;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (command === undefined) {
    process.stderr.write(
      unknownName(
        name,
        COMMANDS.map((candidate) => candidate.name),
        'command',
        'rack-webhooks',
        'rack-webhooks --help',
      ),
    );
    return 2;
  }
  if (!isGroup(command)) return runCommand(command, command.name, rest);
  const [subName, ...subRest] = rest;
  if (subName === undefined) {
    process.stderr.write(`${command.help}\n`);
    return 2;
  }
  if (subName === '--help' || subName === '-h' || subName === 'help') {
    const sub = command.subcommands.find((candidate) => candidate.name === subRest[0]);
    process.stdout.write(`${(sub ?? command).help}\n`);
    return 0;
  }
  const sub = command.subcommands.find((candidate) => candidate.name === subName);
  if (sub === undefined) {
    const names = command.subcommands.map((candidate) => candidate.name);
    process.stderr.write(
      unknownName(subName, names, 'subcommand', `rack-webhooks ${command.name}`, `rack-webhooks ${command.name} --help`),
    );
    return 2;
  }
  return runCommand(sub, `${command.name} ${sub.name}`, subRest);
}

async function runCommand(command: Command, fullName: string, args: readonly string[]): Promise<number> {
  try {
    const { flags, positionals } = parseCommandLine(
      args,
      { ...flagSpec(command.flags), help: { type: 'boolean', short: 'h' } },
      command.positionals ?? 0,
    );
    if (flags['help'] === true) {
      process.stdout.write(`${command.help}\n`);
      return 0;
    }
    return await command.run(flags, positionals);
  } catch (error) {
    const usage = isUsageError(error);
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`rack-webhooks ${fullName}: ${oneLine(message)}\n`);
    // A bug, not a user error: the stack helps, but only on request.
    if (!usage && process.env['RACK_WEBHOOKS_DEBUG'] !== undefined && error instanceof Error) process.stderr.write(`${error.stack}\n`);
    return usage ? 2 : 1;
  }
}
