import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_MAX_BODY_BYTES, handleWebhookRequest } from '../../adapters/core.js';
import { readNodeBody } from '../../adapters/node-body.js';
import { writeNodeResponse } from '../../adapters/node.js';
import { createReceiver, DEFAULT_HEADER_NAME } from '../../receiver/create-receiver.js';
import { HEADER_NAME_FLAG, KEY_FLAGS, KEY_HELP, UsageError, headerNameFlag, requireKeys, secondsFlag, secretEncoding, stringFlag, type Flags } from '../args.js';
import type { Command } from '../command.js';
import { openDeliveryLog, type DeliveryLog } from '../delivery-log.js';
import { acceptedLine, colourEnabled, rejectedLine } from '../format.js';

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

export const listen: Command = {
  name: 'listen',
  summary: 'run a verifying receiver that prints one line per delivery',
  help: `Usage: rack-webhooks listen --port P --key K [--host 127.0.0.1] [--log events.jsonl]

Runs a receiver that verifies, parses and de-duplicates deliveries (POST, any path) and answers
as the SDK's adapters do. Prints "listening on http://HOST:PORT/webhooks", then one line per
delivery: time, outcome, action, app and tick_id, or the status and code it was refused with.

  --port P                the port (0: a free one, printed in the first line)
  --host H                the address to bind (default 127.0.0.1)
${KEY_HELP}
  --header-name N         the signature header (default ${DEFAULT_HEADER_NAME}; racks may use a vendor prefix)
  --tolerance S           seconds either side of now (default 300; Infinity turns the check off)
  --log F                 append every accepted payload (processed or ignored) to F, one per line, as
                          received, synced to disk before the 200 is sent (a pipe, terminal or
                          device is written, not synced)`,
  flags: { ...KEY_FLAGS, ...HEADER_NAME_FLAG, port: { type: 'string' }, host: { type: 'string' }, tolerance: { type: 'string' }, log: { type: 'string' } },
  async run(flags) {
    const tolerance = secondsFlag(flags, 'tolerance', true);
    const headerName = headerNameFlag(flags);
    const receiver = createReceiver({
      secrets: requireKeys(flags, process.env),
      secretEncoding: secretEncoding(flags),
      ...(tolerance === undefined ? {} : { tolerance }),
      ...(headerName === undefined ? {} : { headerName }),
    });
    const listenPort = port(flags);
    const host = stringFlag(flags, 'host') ?? '127.0.0.1';
    const logPath = stringFlag(flags, 'log');
    const log: DeliveryLog | undefined = logPath === undefined ? undefined : openDeliveryLog(logPath);
    const colour = colourEnabled(process.stdout, process.env);
    const print = (line: string) => process.stdout.write(`${line}\n`);

    // The raw bytes of the delivery being received. The log is written from a handler, so a failed
    // write fails the delivery (500) and the receiver releases its dedup claim for a later copy.
    const rawBody = new AsyncLocalStorage<{ body?: Uint8Array | string }>();
    if (log !== undefined) receiver.onAny(() => log.append(rawBody.getStore()!.body!));

    // The same request path as the adapters (405, 415, 413, then the receiver), printed per delivery.
    async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const delivery: { body?: Uint8Array | string } = {};
      const response = await rawBody.run(delivery, () =>
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
      );
      if (response.event !== undefined && 'status' in response.result) {
        const { action, data } = response.event;
        print(acceptedLine({ outcome: response.result.status, action, data: data as Record<string, unknown> }, colour));
      } else {
        const code = 'error' in response.result ? response.result.error : String(response.status);
        print(rejectedLine(response.status, code, reason(response.cause), colour));
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
        server.once('error', (error: NodeJS.ErrnoException) => reject(new Error(`cannot listen on ${host}:${listenPort} (${error.code ?? error.message})`)));
        server.listen(listenPort, host, resolve);
      });
    } catch (error) {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      log?.close();
      throw error;
    }
    const address = server.address() as AddressInfo;
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    print(`listening on http://${shownHost}:${address.port}/webhooks`);
    await stopped;
    process.off('SIGINT', stop).off('SIGTERM', stop); // the other one of the two is still installed
    log?.close();
    return 0;
  },
};
