/**
 * rack-webhooks/node: a handler for `node:http` servers and anything built on them.
 *
 * @module rack-webhooks/node
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnyReceiver as Receiver } from '../receiver/types.js';
import { handleWebhookRequest, resolveMaxBodyBytes, type AdapterOptions, type WebhookResponse } from './core.js';
import { discardRest, readNodeBody, type RequestWithBody } from './node-body.js';
import { observeReceivers } from '../telemetry/receive.js';

export type { AdapterOptions, WebhookResponse } from './core.js';
export { WebhookMountError } from './errors.js';
export { observeReceivers } from '../telemetry/receive.js';
export * from '../shutdown/index.js';

/**
 * Writes the answer. A 413 is written in full at once (a client reading while it sends has it),
 * then the rest of the body is read and discarded before the response ends: Node closes a
 * `Connection: close` socket as the response ends, and closing with the body still arriving resets
 * the connection, which can destroy the 413 before the client reads it. Past the bound
 * (16 MiB or 10 s) the connection is cut.
 */
export function writeNodeResponse(res: ServerResponse, response: WebhookResponse, req?: IncomingMessage): void {
  if (res.headersSent) return;
  res.writeHead(response.status, { ...response.headers, 'content-length': String(Buffer.byteLength(response.body)) });
  if (response.status !== 413 || req === undefined) return void res.end(response.body);
  res.write(response.body);
  discardRest(req, (cut) => {
    res.end();
    if (cut) req.socket?.destroy();
  });
}

/**
 * `(req, res) => Promise<void>` for `http.createServer`. It reads the body itself (up to
 * `maxBodyBytes`) and answers with the status table of docs/errors.md: 200 `{"status":"processed"}`
 * (or `duplicate`, `ignored`, `accepted`), 401 for a bad signature, 400, 405, 413, 415, 500, 503.
 *
 * @param receiver - A receiver from `createReceiver`, with or without an inbox.
 * @param options - The body limit, and when to answer.
 * @returns The request handler.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createReceiver } from 'rack-webhooks';
 * import { createNodeHandler } from 'rack-webhooks/node';
 *
 * const receiver = createReceiver({ secrets: process.env.RACK_WEBHOOK_SECRETS! });
 * const handle = createNodeHandler(receiver);
 * createServer((req, res) => (req.url === '/webhooks' ? handle(req, res) : res.writeHead(404).end())).listen(3000);
 * ```
 */
export function createNodeHandler(
  receiver: Receiver,
  options: AdapterOptions = {},
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const maxBodyBytes = resolveMaxBodyBytes(options);
  // Spans and metrics of every receiver, this one included, once an OpenTelemetry SDK is registered.
  observeReceivers();
  return async (req, res) => {
    const response = await handleWebhookRequest(
      receiver,
      { method: req.method, headers: req.headers, readBody: (limit) => readNodeBody(req as RequestWithBody, limit, 'node') },
      { ...options, maxBodyBytes },
    );
    writeNodeResponse(res, response, req);
  };
}
