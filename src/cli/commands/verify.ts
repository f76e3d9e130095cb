import { WebhookVerificationError } from '../../signature/errors.js';
import { verifySync } from '../../signature/verify.js';
import { DEFAULT_HEADER_NAME } from '../../receiver/create-receiver.js';
import {
  FILE_FLAG,
  HEADER_NAME_FLAG,
  KEY_FLAGS,
  TOLERANCE_FLAG,
  UsageError,
  assertUsableKeys,
  flagsHelp,
  headerNameFlag,
  readBody,
  requireKeys,
  secondsFlag,
  optionalSecretEncoding,
  stringFlag,
  type FlagDeclarations,
  type Flags,
} from '../args.js';
import type { Command } from '../command.js';
import { inFlagTerms, oneLine, verifiedLine } from '../format.js';

/** `Name:` at the start of a pasted header line: an HTTP token (RFC 9110), then a colon. */
const HEADER_LINE = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:/;

/**
 * The header as pasted: a whole header line from a log works too, whatever its name
 * (`Service-Signature: t=...`, a deployed rack's `Acme-Signature: t=...`), so the operator does
 * not have to cut the name off first. A bare value has no colon, so it is never mistaken for one.
 */
export function headerValue(flags: Flags): string {
  const header = stringFlag(flags, 'header');
  if (header === undefined)
    throw new UsageError('no signature: pass --header "t=...,v1=..." (the signature header\'s value or whole line)');
  const name = headerNameFlag(flags);
  const line = HEADER_LINE.exec(header);
  if (line === null) return header;
  if (name !== undefined && line[1]!.toLowerCase() !== name.toLowerCase()) {
    throw new UsageError(`--header is a ${line[1]!} line but --header-name is ${name}: paste the ${name} header, or drop --header-name`);
  }
  return header.slice(line[0].length).trim();
}

const FLAGS = {
  ...KEY_FLAGS,
  header: {
    type: 'string',
    value: 'H',
    help: `the signature header value, t=...,v1=..., or the whole pasted line of any
name ("${DEFAULT_HEADER_NAME}: t=...", "Acme-Signature: t=...")`,
  },
  'header-name': { ...HEADER_NAME_FLAG['header-name'], help: 'only accept a pasted line of this name' },
  ...TOLERANCE_FLAG,
  now: { type: 'string', value: 'T', help: 'unix seconds to judge the timestamp against (stored deliveries)' },
  ...FILE_FLAG,
} as const satisfies FlagDeclarations;

export const verify: Command = {
  name: 'verify',
  summary: 'check a body against a signature header, with the reason when it fails',
  help: `Usage: rack-webhooks verify --key K [--key K2] --header H [--file F] < body.json

Verifies the body (stdin, or --file, exactly the bytes the receiver got) against the header value.
Prints one line, "ok: ..." (exit 0) or "<code>: <reason>" (exit 1); the reason says when a key
would match under the other --secret-encoding, or has stray whitespace.

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const secrets = requireKeys(flags, process.env);
    const header = headerValue(flags);
    const tolerance = secondsFlag(flags, 'tolerance', true);
    const now = secondsFlag(flags, 'now') ?? Math.floor(Date.now() / 1000);
    const encoding = optionalSecretEncoding(flags);
    assertUsableKeys(secrets, encoding ?? 'utf8');
    const body = await readBody(stringFlag(flags, 'file'));
    try {
      const result = verifySync(body, header, {
        secrets,
        now,
        ...(encoding === undefined ? {} : { secretEncoding: encoding }),
        ...(tolerance === undefined ? {} : { tolerance }),
      });
      const how = encoding === undefined && result.secretEncoding === 'hex' ? ' (hex-decoded, as a deployed rack uses it)' : '';
      process.stdout.write(`${verifiedLine(result.secretIndex, secrets.length, result.timestamp, now).replace(/\)/, `)${how}`)}\n`);
      return 0;
    } catch (error) {
      // The receiver's own configuration (no or an invalid key) is a usage error: main reports it.
      if (!(error instanceof WebhookVerificationError) || error.status === 500) throw error;
      process.stdout.write(`${error.code}: ${inFlagTerms(oneLine(error.message))}\n`);
      return 1;
    }
  },
};
