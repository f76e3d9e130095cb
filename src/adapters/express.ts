/**
 * rack-webhooks/express: middleware for Express 4 and 5, mounted on the webhook route.
 *
 * @module rack-webhooks/express
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnyReceiver as Receiver } from '../receiver/types.js';
import { handleWebhookRequest, resolveMaxBodyBytes, type AdapterOptions } from './core.js';
import { readNodeBody, type RequestWithBody } from './node-body.js';
import { writeNodeResponse } from './node.js';
import { observeReceivers } from '../telemetry/receive.js';

export type { AdapterOptions, WebhookResponse } from './core.js';
export { WebhookMountError } from './errors.js';

/**
 * `app.all('/webhooks', webhookMiddleware(receiver))`. Reads the raw body itself. If a body parser
 * ran first, it uses the raw bytes the parser kept (`express.raw()` leaves a Buffer in `req.body`;
 * `express.json({ verify })` can keep one in `req.rawBody`), and otherwise answers 500 at once with
 * how to mount it: never a hang, a 200, or a check over re-serialised JSON.
 *
 * @param receiver - A receiver from `createReceiver`, with or without an inbox.
 * @param options - The body limit, and when to answer.
 * @returns Express 4 or 5 middleware that answers every request it gets.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createReceiver } from 'rack-webhooks';
 * import { webhookMiddleware } from 'rack-webhooks/express';
 *
 * const receiver = createReceiver({ secrets: process.env.RACK_WEBHOOK_SECRETS! });
 * const app = express();
 * app.all('/webhooks', webhookMiddleware(receiver)); // before express.json(); `all` for the 405 on other methods
 * app.use(express.json());
 * ```
 */
export function webhookMiddleware(
  receiver: Receiver,
  options: AdapterOptions = {},
): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  const maxBodyBytes = resolveMaxBodyBytes(options);
  // Spans and metrics of every receiver, this one included, once an OpenTelemetry SDK is registered.
  observeReceivers();
  return (req, res, next) => {
    handleWebhookRequest(
      receiver,
      { method: req.method, headers: req.headers, readBody: (limit) => readNodeBody(req as RequestWithBody, limit, 'express') },
      { ...options, maxBodyBytes },
    ).then((response) => writeNodeResponse(res, response, req), next);
  };
}
