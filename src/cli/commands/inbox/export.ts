import { closeSync, fdatasyncSync, fstatSync, openSync, writeSync } from 'node:fs';
import type { DeliveryFilter, InboxOperator } from '../../../inbox/facade/index.js';
import { UsageError, flagsHelp, stringFlag, type FlagDeclarations } from '../../args.js';
import type { Command } from '../../command.js';
import { logLine } from '../../delivery-log.js';
import { exportLine } from './export-line.js';
import { FILTER_FLAGS, filterFromFlags } from './filter-flags.js';
import { deliveries } from './render.js';
import { DATABASE_FLAGS, withInbox } from '../../inbox-session.js';

const PAGE = 1000;

interface Sink {
  write(line: string | Buffer): Promise<void>;
  finish(): void;
}

/** --out F: truncated, written, and synced to disk before the count is printed. */
function fileSink(path: string): Sink {
  let fd: number;
  try {
    fd = openSync(path, 'w');
  } catch (error) {
    throw new UsageError(`cannot open --out ${JSON.stringify(path)} (${(error as { code?: string }).code ?? 'error'})`);
  }
  return {
    async write(line) {
      const bytes = typeof line === 'string' ? Buffer.from(line, 'utf8') : line;
      let written = 0;
      while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    },
    finish() {
      try {
        if (fstatSync(fd).isFile()) fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
    },
  };
}

/** stdout, waiting when the reader is slower than the database. */
function stdoutSink(): Sink {
  return {
    write: (line) =>
      new Promise((resolve) => {
        if (process.stdout.write(line)) resolve();
        else process.stdout.once('drain', () => resolve());
      }),
    finish() {},
  };
}

/** Every delivery the filter selects, oldest event first, page by page. */
async function exportAll(operator: InboxOperator, filter: DeliveryFilter, bodiesOnly: boolean, sink: Sink): Promise<number> {
  let count = 0;
  let after: string | undefined;
  do {
    const page = await operator.list({ ...filter, limit: PAGE, ...(after === undefined ? {} : { after }) });
    for (const summary of page.deliveries) {
      const delivery = await operator.get(summary.id);
      if (delivery === undefined) continue; // pruned since the page was read
      await sink.write(bodiesOnly ? logLine(delivery.body) : exportLine(delivery));
      count++;
    }
    after = page.next;
  } while (after !== undefined);
  return count;
}

const FLAGS = {
  ...DATABASE_FLAGS,
  ...FILTER_FLAGS,
  out: { type: 'string', value: 'F', help: 'write to F (replacing it; synced to disk) instead of stdout' },
  bodies: { type: 'boolean', help: 'only the bodies, in the listen --log format' },
} as const satisfies FlagDeclarations;

export const exportCommand: Command = {
  name: 'export',
  summary: 'write deliveries as JSON Lines, re-verifiable (import reads them back)',
  help: `Usage: rack-webhooks inbox export --database D [--out deliveries.jsonl] [filter flags]

Writes the selected deliveries, oldest event first, one JSON object per line:
  {"id":"12","received_at":"2026-...Z","signature":"t=...,v1=...","body":"<the body as received>"}
"body" holds the raw body exactly as received ("body_base64" when it is not UTF-8), so each
line can be verified again: inbox import does (jq -j .body gives the bytes, jq -r .signature the
header, for rack-webhooks verify --now <received_at in unix seconds>). With --bodies it writes
only the bodies, one per line, as listen --log does: no signature, so import cannot read that.
The lines hold valid signatures: keep the file as you keep the database.

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const filter = filterFromFlags(flags);
    const out = stringFlag(flags, 'out');
    const count = await withInbox(flags, {}, async ({ operator }) => {
      // Opened once the database is: a failed connection leaves an earlier export in place.
      const sink = out === undefined ? stdoutSink() : fileSink(out);
      try {
        return await exportAll(operator, filter, flags['bodies'] === true, sink);
      } finally {
        sink.finish();
      }
    });
    if (out === undefined) process.stderr.write(`exported ${deliveries(count)}\n`);
    else process.stdout.write(`exported ${deliveries(count)} to ${out}\n`);
    return 0;
  },
};
