import { constants, createReadStream, fstatSync, openSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { WEBHOOK_ACTIONS } from '../../../generated/catalog.js';
import { WebhookInboxError } from '../../../inbox/facade/index.js';
import { createReceiver } from '../../../receiver/create-receiver.js';
import {
  KEY_FLAGS,
  UsageError,
  flagsHelp,
  type FlagDeclarations,
  assertUsableKeys,
  requireKeys,
  secondsFlag,
  optionalSecretEncoding,
} from '../../args.js';
import type { Command } from '../../command.js';
import { inFlagTerms, oneLine } from '../../format.js';
import { parseExportLine, type ExportedDelivery } from './export-line.js';
import { DATABASE_FLAGS, notifyWorkers, withInbox, type InboxSession } from '../../inbox-session.js';

/** The file, opened before the database is: a typo fails fast, as a usage error. */
function openInput(path: string): Readable {
  if (path === '-') {
    if (process.stdin.isTTY === true) throw new UsageError('no input: pipe an export on stdin, or name the file');
    return process.stdin;
  }
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY);
  } catch (error) {
    throw new UsageError(`cannot read ${JSON.stringify(path)} (${(error as { code?: string }).code ?? 'error'})`);
  }
  if (fstatSync(fd).isDirectory()) throw new UsageError(`cannot read ${JSON.stringify(path)} (EISDIR)`);
  return createReadStream('', { fd });
}

function isRejection(error: unknown): boolean {
  const { code, status } = (error ?? {}) as { code?: unknown; status?: unknown };
  return !(error instanceof WebhookInboxError) && typeof code === 'string' && typeof status === 'number' && status >= 400 && status < 500;
}

interface Counts {
  accepted: number;
  ignored: number;
  duplicate: number;
  rejected: number;
}

/**
 * Each line through a receiver whose clock reads the time the delivery was received: its
 * signature is judged as it was then, so an old delivery still verifies and a forged or
 * altered one does not. The stored row keeps that time as its received_at.
 */
async function importLines(
  session: InboxSession,
  input: Readable,
  receiverOptions: Omit<Parameters<typeof createReceiver>[0], 'inbox' | 'now'>,
): Promise<Counts> {
  let current: ExportedDelivery | undefined;
  // The receiver's clock reads the export's received_at, so the stored row keeps it (DeliveryToStore.receivedAt).
  const now = () => current!.receivedAt.getTime();
  const receiver = createReceiver({ ...receiverOptions, inbox: session.inbox, now });
  // A delivery the source stored as ignored stays a record: every known action is ignored here
  // (an unknown one is anyway).
  const ignoring = createReceiver({ ...receiverOptions, inbox: session.inbox, now, ignore: [...WEBHOOK_ACTIONS] });
  const counts: Counts = { accepted: 0, ignored: 0, duplicate: 0, rejected: 0 };
  let number = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    number++;
    if (line.trim() === '') continue;
    const parsed = parseExportLine(line);
    if (!('delivery' in parsed)) {
      counts.rejected++;
      process.stdout.write(`line ${number}: ${parsed.code}: ${parsed.reason}\n`);
      continue;
    }
    current = parsed.delivery;
    try {
      const through = current.ignored ? ignoring : receiver;
      const { outcome } = await through.receive({ body: current.body, headers: { [receiver.headerName]: current.signature } });
      counts[outcome === 'processed' ? 'accepted' : outcome]++;
    } catch (error) {
      // A delivery failing its checks (a 4xx from the SDK) is reported and skipped; the database failing stops the import.
      if (!isRejection(error)) throw error;
      counts.rejected++;
      const { code, message } = error as { code: string; message: string };
      process.stdout.write(`line ${number}: ${code}: ${inFlagTerms(oneLine(message))}\n`);
    }
  }
  return counts;
}

const FLAGS = {
  ...DATABASE_FLAGS,
  ...KEY_FLAGS,
  tolerance: { type: 'string', value: 'S', help: 'seconds either side of the time received (default 300; Infinity turns it off)' },
} as const satisfies FlagDeclarations;

export const importCommand: Command = {
  name: 'import',
  summary: 'store the deliveries of an export, re-verifying each as of the time it was received',
  help: `Usage: rack-webhooks inbox import <file | -> --database D --key K [--key K2]

Reads an inbox export (one JSON object per line: received_at, signature, body) and stores each
delivery through a receiver, as listen --inbox would have: verified against the keys, judged
against the time it was received (so an old delivery still verifies, a forged or altered one
does not), parsed, and stored as pending (ignored when it was ignored at the source, or its
action is unknown), keeping its received_at. A delivery
already stored is a duplicate. Prints one line per rejected delivery ("line N: <code>:
<reason>"), then the counts. Exit 1 when any was rejected. The schema must exist (inbox migrate).

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  positionals: 1,
  async run(flags, positionals) {
    const file = positionals[0];
    if (file === undefined) throw new UsageError('no file: rack-webhooks inbox import <file | -> --database D --key K');
    const secrets = requireKeys(flags, process.env);
    const encoding = optionalSecretEncoding(flags);
    assertUsableKeys(secrets, encoding ?? 'utf8');
    const tolerance = secondsFlag(flags, 'tolerance', true);
    const input = openInput(file);
    let counts: Counts;
    try {
      counts = await withInbox(flags, {}, async (session) => {
        const result = await importLines(session, input, {
          secrets,
          ...(encoding === undefined ? {} : { secretEncoding: encoding }),
          ...(tolerance === undefined ? {} : { tolerance }),
        });
        if (result.accepted > 0) await notifyWorkers(session);
        return result;
      });
    } finally {
      if (input !== process.stdin) input.destroy();
    }
    process.stdout.write(
      `${counts.accepted} accepted, ${counts.ignored} ignored, ${counts.duplicate} duplicate, ${counts.rejected} rejected\n`,
    );
    return counts.rejected > 0 ? 1 : 0;
  },
};
