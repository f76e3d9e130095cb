import { WebhookVerificationError } from '../../signature/errors.js';
import { verifySync } from '../../signature/verify.js';
import { DEFAULT_HEADER_NAME } from '../../receiver/create-receiver.js';
import {
  FILE_FLAG,
  HEADER_NAME_FLAG,
  KEY_FLAGS,
  KEY_HELP,
  UsageError,
  assertUsableKeys,
  headerNameFlag,
  readBody,
  requireKeys,
  secondsFlag,
  secretEncoding,
  stringFlag,
  type Flags,
} from '../args.js';
import type { Command } from '../command.js';
import { inFlagTerms, oneLine, verifiedLine } from '../format.js';

/**
 * The header as pasted: a whole `Service-Signature: t=...` line from a log works too, so the
 * operator does not have to cut the name off first.
 */
function headerValue(flags: Flags): string {
  const header = stringFlag(flags, 'header');
  if (header === undefined) throw new UsageError('no signature: pass --header "t=...,v1=..." (the Service-Signature value)');
  const name = headerNameFlag(flags) ?? DEFAULT_HEADER_NAME;
  const prefix = `${name.toLowerCase()}:`;
  return header.toLowerCase().startsWith(prefix) ? header.slice(prefix.length).trim() : header;
}

export const verify: Command = {
  name: 'verify',
  summary: 'check a body against a signature header, with the reason when it fails',
  help: `Usage: rack-webhooks verify --key K [--key K2] --header H [--file F] < body.json

Verifies the body (stdin, or --file, exactly the bytes the receiver got) against the header value.
Prints one line, "ok: ..." (exit 0) or "<code>: <reason>" (exit 1); the reason says when a key
would match under the other --secret-encoding, or has stray whitespace.

${KEY_HELP}
  --header H              the signature header value, t=...,v1=... ("Name: value" also accepted)
  --header-name N         the header's name, to strip from a pasted "Name: value" (default ${DEFAULT_HEADER_NAME})
  --tolerance S           seconds either side of now (default 300; Infinity turns the check off)
  --now T                 unix seconds to judge the timestamp against (stored deliveries)
  --file F                read the body from F instead of stdin (at most 16 MiB, not empty)`,
  flags: {
    ...KEY_FLAGS,
    ...FILE_FLAG,
    ...HEADER_NAME_FLAG,
    header: { type: 'string' },
    tolerance: { type: 'string' },
    now: { type: 'string' },
  },
  async run(flags) {
    const secrets = requireKeys(flags, process.env);
    const header = headerValue(flags);
    const tolerance = secondsFlag(flags, 'tolerance', true);
    const now = secondsFlag(flags, 'now') ?? Math.floor(Date.now() / 1000);
    const encoding = secretEncoding(flags);
    assertUsableKeys(secrets, encoding);
    const body = await readBody(stringFlag(flags, 'file'));
    try {
      const result = verifySync(body, header, {
        secrets,
        now,
        secretEncoding: encoding,
        ...(tolerance === undefined ? {} : { tolerance }),
      });
      process.stdout.write(`${verifiedLine(result.secretIndex, secrets.length, result.timestamp, now)}\n`);
      return 0;
    } catch (error) {
      // The receiver's own configuration (no or an invalid key) is a usage error: main reports it.
      if (!(error instanceof WebhookVerificationError) || error.status === 500) throw error;
      process.stdout.write(`${error.code}: ${inFlagTerms(oneLine(error.message))}\n`);
      return 1;
    }
  },
};
