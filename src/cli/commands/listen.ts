import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_MAX_BODY_BYTES, handleWebhookRequest } from '../../adapters/core.js';
import { readNodeBody } from '../../adapters/node-body.js';
import { writeNodeResponse } from '../../adapters/node.js';
import { composeInbox, DEFAULT_TABLE, type Inbox } from '../../inbox/facade/index.js';
import { createReceiver, DEFAULT_HEADER_NAME, type Receiver } from '../../receiver/create-receiver.js';
import {
  HEADER_NAME_FLAG,
  KEY_FLAGS,
  TOLERANCE_FLAG,
  UsageError,
  flagsHelp,
  headerNameFlag,
  optionalSecretEncoding,
  requireKeys,
  secondsFlag,
  secretEncoding,
  stringFlag,
  type FlagDeclarations,
  type Flags,
} from '../args.js';
import type { Command } from '../command.js';
import { openDeliveryLog, type DeliveryLog } from '../delivery-log.js';
import { acceptedLine, colourEnabled, rejectedLine } from '../format.js';
import { openDatabase, scrub, type OpenedDatabase } from '../open-database.js';
import { databaseFailure, tableNames, targetFlag } from '../inbox-session.js';

function port(flags: Flags): number {
  const text = stringFlag(flags, 'port');
  if (text === undefined) throw new UsageError('no port: pass --port P (0 picks a free one)');
  if (!/^\d+$/.test(text) || Number(text) > 65535) throw new UsageError(`--port must be 0 to 65535, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** Why a request was refused, from the SDK's own message (never a secret or a body); none for plain HTTP refusals. */
function reason(error: unknown): string | undefined {
  return error instanceof Error && typeof (error as { code?: unknown }).code === 'string' ? error.message : undefined;
}

const FLAGS = {
  port: { type: 'string', value: 'P', help: 'the port (0: a free one, printed in the first line)' },
  host: { type: 'string', value: 'H', help: 'the address to bind (default 127.0.0.1)' },
  ...KEY_FLAGS,
  'header-name': {
    ...HEADER_NAME_FLAG['header-name'],
    help: `the signature header (default ${DEFAULT_HEADER_NAME}; racks may use a vendor prefix)`,
  },
  ...TOLERANCE_FLAG,
  log: {
    type: 'string',
    value: 'F',
    help: `append every accepted payload (processed or ignored) to F, one per line, as
received, synced to disk before the 200 is sent (a pipe, terminal or
device is written, not synced)`,
  },
  inbox: {
    type: 'string',
    value: 'D',
    help: `store deliveries in the inbox at D: a postgres:// URL (needs npm install pg)
or a PGlite directory (needs npm install @electric-sql/pglite; created
when missing; open in one process at a time)`,
  },
  table: { type: 'string', value: 'T', help: `the inbox table (default ${DEFAULT_TABLE}; may be schema-qualified)` },
} as const satisfies FlagDeclarations;

export const listen: Command = {
  name: 'listen',
  summary: 'run a verifying receiver that prints one line per delivery',
  help: `Usage: rack-webhooks listen --port P --key K [--host 127.0.0.1] [--log events.jsonl | --inbox D]

Runs a receiver that verifies, parses and de-duplicates deliveries (POST, any path) and answers
as the SDK's adapters do. Prints "listening on http://HOST:PORT/webhooks", then one line per
delivery: time, outcome, action, app and tick_id, or the status and code it was refused with.

With --inbox it stores each verified delivery in an inbox (creating its schema at start) and
answers 200 once the row is committed, 503 inbox_unavailable when the database cannot be
reached; each line ends with the row's id. It runs no handlers (it has none): run them in your
app with inbox.work(receiver), and look at what was stored with rack-webhooks inbox list.

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const tolerance = secondsFlag(flags, 'tolerance', true);
    const headerName = headerNameFlag(flags);
    const receiverOptions = {
      secrets: requireKeys(flags, process.env),
      ...(optionalSecretEncoding(flags) === undefined ? {} : { secretEncoding: secretEncoding(flags) }),
      ...(tolerance === undefined ? {} : { tolerance }),
      ...(headerName === undefined ? {} : { headerName }),
    };
    // Built first, with or without an inbox: a key or option mistake is reported before a database is opened.
    const plain = createReceiver(receiverOptions);
    const listenPort = port(flags);
    const host = stringFlag(flags, 'host') ?? '127.0.0.1';
    const logPath = stringFlag(flags, 'log');
    const colour = colourEnabled(process.stdout, process.env);
    const print = (line: string) => process.stdout.write(`${line}\n`);
    if (stringFlag(flags, 'inbox') === undefined && stringFlag(flags, 'table') !== undefined)
      throw new UsageError('--table goes with --inbox');
    if (stringFlag(flags, 'inbox') !== undefined && logPath !== undefined) {
      throw new UsageError('pass --inbox or --log, not both: the inbox keeps every delivery (rack-webhooks inbox export writes them out)');
    }
    const opened = stringFlag(flags, 'inbox') === undefined ? undefined : await openInbox(flags);
    // The row id of the delivery being answered, for its line.
    const ids = new AsyncLocalStorage<{ id?: string }>();
    let receiver: Receiver;
    if (opened === undefined) receiver = plain;
    else {
      const withInbox = createReceiver({ ...receiverOptions, inbox: opened.inbox });
      receiver = Object.create(withInbox, {
        receive: {
          value: async (...args: Parameters<Receiver['receive']>) => {
            const result = await withInbox.receive(...args);
            const store = ids.getStore();
            if (store !== undefined && result.id !== undefined) store.id = result.id;
            return result;
          },
        },
      }) as Receiver;
    }
    const log: DeliveryLog | undefined = logPath === undefined ? undefined : openDeliveryLog(logPath);

    // The raw bytes of the delivery being received. The log is written from a handler, so a failed
    // write fails the delivery (500) and the receiver releases its dedup claim for a later copy.
    const rawBody = new AsyncLocalStorage<{ body?: Uint8Array | string }>();
    if (log !== undefined) receiver.onAny(() => log.append(rawBody.getStore()!.body!));

    // The same request path as the adapters (405, 415, 413, then the receiver), printed per delivery.
    async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const delivery: { body?: Uint8Array | string } = {};
      const stored: { id?: string } = {};
      const response = await ids.run(stored, () =>
        rawBody.run(delivery, () =>
          handleWebhookRequest(
            receiver,
            {
              method: req.method,
              headers: req.headers,
              readBody: async (limit) => {
                const read = await readNodeBody(req, limit, 'node');
                if ('body' in read) delivery.body = read.body;
                return read;
              },
            },
            { maxBodyBytes: DEFAULT_MAX_BODY_BYTES },
          ),
        ),
      );
      if (response.event !== undefined && 'status' in response.result) {
        const { action, data } = response.event;
        const id = opened === undefined ? {} : { id: stored.id ?? '-' };
        print(acceptedLine({ outcome: response.result.status, action, data: data as Record<string, unknown>, ...id }, colour));
      } else {
        const code = 'error' in response.result ? response.result.error : String(response.status);
        const why = reason(response.cause);
        print(
          rejectedLine(response.status, code, why === undefined || opened === undefined ? why : scrub(why, opened.database.target), colour),
        );
      }
      writeNodeResponse(res, response, req);
    }

    const server = createServer((req, res) => void answer(req, res));
    // Installed before the address is printed: whoever read that line may signal at once.
    let closed = () => {};
    const stopped = new Promise<void>((resolve) => (closed = resolve));
    const stop = () => {
      server.close(() => closed());
      server.closeAllConnections();
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) =>
          reject(new Error(`cannot listen on ${host}:${listenPort} (${error.code ?? error.message})`)),
        );
        server.listen(listenPort, host, resolve);
      });
    } catch (error) {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      log?.close();
      await opened?.database.close();
      throw error;
    }
    const address = server.address() as AddressInfo;
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    print(`listening on http://${shownHost}:${address.port}/webhooks`);
    if (opened !== undefined) print(opened.storing);
    await stopped;
    process.off('SIGINT', stop).off('SIGTERM', stop); // the other one of the two is still installed
    log?.close();
    await opened?.database.close();
    return 0;
  },
};

/** --inbox: the database opened, the schema brought up to date, and the line saying where deliveries go. */
async function openInbox(flags: Flags): Promise<{ inbox: Inbox; database: OpenedDatabase; storing: string }> {
  const target = targetFlag(flags, 'inbox');
  const names = tableNames(flags);
  const database = await openDatabase(target, { create: true, poolSize: 10 });
  try {
    const { inbox } = composeInbox({ database: database.client, table: names.display });
    const { version } = await inbox.migrate();
    return {
      inbox,
      database,
      storing: `storing deliveries in ${names.display} at ${target.shown} (schema version ${version}); no handlers run here`,
    };
  } catch (error) {
    await database.close().catch(() => {});
    throw databaseFailure(error, target, names);
  }
}
