/**
 * Dispatches to a command and turns every failure into one line and an exit code. Kept apart from
 * main.ts, which only runs it, so the tests can also run it in-process (and measure its coverage).
 */
import { version } from '../../package.json';
import { WebhookVerificationError } from '../signature/errors.js';
import { UsageError, parseFlags } from './args.js';
import type { Command } from './command.js';
import { keygen } from './commands/keygen.js';
import { listen } from './commands/listen.js';
import { send } from './commands/send.js';
import { sign } from './commands/sign.js';
import { verify } from './commands/verify.js';
import { oneLine } from './format.js';
import { nearest } from './suggest.js';

const COMMANDS: readonly Command[] = [keygen, sign, verify, send, listen];

function overview(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return `Usage: rack-webhooks <command> [flags]

Sign, verify, send and receive the rack's webhooks.

${COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`).join('\n')}

Run "rack-webhooks <command> --help" for a command's flags. Keys can come from --key, --key-file
or $RACK_WEBHOOK_SECRETS. Exit codes: 0 ok, 1 verification or delivery failed, 2 usage error.
`;
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
    const topic = COMMANDS.find((command) => command.name === rest[0]);
    process.stdout.write(topic === undefined ? overview() : `${topic.help}\n`);
    return 0;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (command === undefined) {
    // The name is echoed only when it looks like a word: a pasted key must not end up in a log.
    const shown = /^[\w-]{1,20}$/.test(name) ? ` "${name}"` : '';
    const [guess] = nearest(name, COMMANDS.map((candidate) => candidate.name), 1);
    process.stderr.write(`rack-webhooks: unknown command${shown}; did you mean "${guess}"? (rack-webhooks --help lists them)\n`);
    return 2;
  }
  try {
    const flags = parseFlags(rest, { ...command.flags, help: { type: 'boolean', short: 'h' } });
    if (flags['help'] === true) {
      process.stdout.write(`${command.help}\n`);
      return 0;
    }
    return await command.run(flags);
  } catch (error) {
    const usage = isUsageError(error);
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`rack-webhooks ${command.name}: ${oneLine(message)}\n`);
    // A bug, not a user error: the stack helps, but only on request.
    if (!usage && process.env['RACK_WEBHOOKS_DEBUG'] !== undefined && error instanceof Error) process.stderr.write(`${error.stack}\n`);
    return usage ? 2 : 1;
  }
}
