/** rack-webhooks/node: a handler for `node:http` servers and anything built on them. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Receiver } from '../receiver/create-receiver.js';
import { handleWebhookRequest, resolveMaxBodyBytes, type AdapterOptions, type WebhookResponse } from './core.js';
import { readNodeBody, type RequestWithBody } from './node-body.js';

export type { AdapterOptions, WebhookResponse } from './core.js';
export { WebhookMountError } from './errors.js';

export function writeNodeResponse(res: ServerResponse, response: WebhookResponse, closeConnection = false): void {
  if (res.headersSent) return;
  const headers = closeConnection ? { ...response.headers, connection: 'close' } : response.headers;
  res.writeHead(response.status, headers);
  res.end(response.body);
}

/**
 * `(req, res) => Promise<void>` for `http.createServer`. It reads the body itself (up to
 * `maxBodyBytes`) and answers with the status table of the README.
 */
export function createNodeHandler(receiver: Receiver, options: AdapterOptions = {}): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const maxBodyBytes = resolveMaxBodyBytes(options);
  return async (req, res) => {
    let stoppedReading = false;
    const response = await handleWebhookRequest(
      receiver,
      {
        method: req.method,
        headers: req.headers,
        readBody: async (limit) => {
          const read = await readNodeBody(req as RequestWithBody, limit, 'node');
          stoppedReading = 'tooLarge' in read;
          return read;
        },
      },
      { ...options, maxBodyBytes },
    );
    // A 413 leaves unread bytes on the socket: close it rather than read them.
    writeNodeResponse(res, response, stoppedReading || response.status === 413);
  };
}
