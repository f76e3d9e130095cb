import { signSync } from '../../signature/sign.js';
import { FILE_FLAG, KEY_FLAGS, flagsHelp, readBody, signingKeys, stringFlag, timestampFlag, type FlagDeclarations } from '../args.js';
import type { Command } from '../command.js';

const FLAGS = {
  ...KEY_FLAGS,
  timestamp: { type: 'string', value: 'T', help: 'unix seconds to sign with (default: now)' },
  ...FILE_FLAG,
} as const satisfies FlagDeclarations;

export const sign: Command = {
  name: 'sign',
  summary: 'print the Service-Signature header value for a body',
  help: `Usage: rack-webhooks sign --key K [--key K2 ...] [--timestamp T] [--file F] < body.json

Signs the body (stdin, or --file) as the rack does and prints the signature header value,
t=<unix seconds>,v1=<hex>[,v1=...], one v1 per key (1 to 4 keys, as the rack allows).

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const { keys: secrets, encoding } = signingKeys(flags, process.env);
    const timestamp = timestampFlag(flags);
    // Read last: every flag is checked before stdin is consumed.
    const body = await readBody(stringFlag(flags, 'file'));
    const header = signSync(body, {
      secrets,
      secretEncoding: encoding,
      ...(timestamp === undefined ? {} : { timestamp }),
    });
    process.stdout.write(`${header}\n`);
    return 0;
  },
};
