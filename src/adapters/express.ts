/** rack-webhooks/express: middleware for Express 4 and 5, mounted on the webhook route. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnyReceiver as Receiver } from '../receiver/types.js';
import { handleWebhookRequest, resolveMaxBodyBytes, type AdapterOptions } from './core.js';
import { readNodeBody, type RequestWithBody } from './node-body.js';
import { writeNodeResponse } from './node.js';

export type { AdapterOptions, WebhookResponse } from './core.js';
export { WebhookMountError } from './errors.js';

/**
 * `app.post('/webhooks', webhookMiddleware(receiver))`. Reads the raw body itself. If a body parser
 * ran first, it uses the raw bytes the parser kept (`express.raw()` leaves a Buffer in `req.body`;
 * `express.json({ verify })` can keep one in `req.rawBody`), and otherwise answers 500 at once with
 * how to mount it: never a hang, a 200, or a check over re-serialised JSON.
 */
export function webhookMiddleware(
  receiver: Receiver,
  options: AdapterOptions = {},
): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  const maxBodyBytes = resolveMaxBodyBytes(options);
  return (req, res, next) => {
    handleWebhookRequest(
      receiver,
      { method: req.method, headers: req.headers, readBody: (limit) => readNodeBody(req as RequestWithBody, limit, 'express') },
      { ...options, maxBodyBytes },
    ).then((response) => writeNodeResponse(res, response, req), next);
  };
}
