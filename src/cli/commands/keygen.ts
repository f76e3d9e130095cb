import { randomBytes } from 'node:crypto';
import { flagsHelp, type FlagDeclarations } from '../args.js';
import type { Command } from '../command.js';

const FLAGS = { json: { type: 'boolean', help: 'print {"key":"..."} instead of the bare key' } } as const satisfies FlagDeclarations;

/** 32 random bytes, hex: the key the spec recommends, and text that survives any config system. */
export const keygen: Command = {
  name: 'keygen',
  summary: 'print a new random signing key (32 bytes, hex)',
  help: `Usage: rack-webhooks keygen [--json]

Prints a new signing key: 32 random bytes as 64 hex characters, as the spec recommends.
Set it as the rack's webhook_signing_key and as your receiver's secret.

${flagsHelp(FLAGS, 8)}`,
  flags: FLAGS,
  async run(flags) {
    const key = randomBytes(32).toString('hex');
    process.stdout.write(flags['json'] === true ? `${JSON.stringify({ key })}\n` : `${key}\n`);
    return 0;
  },
};
