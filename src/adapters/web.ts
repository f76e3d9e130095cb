/**
 * rack-webhooks/web: a fetch-style handler, `(request: Request) => Promise<Response>`, for Hono,
 * Next.js route handlers, Cloudflare Workers, Bun and Deno. Web APIs only: no `node:` import.
 *
 * @module rack-webhooks/web
 */
import type { AnyReceiver as Receiver } from '../receiver/types.js';
import { handleWebhookRequest, resolveMaxBodyBytes, type AdapterOptions, type BodyReadResult } from './core.js';
import { WebhookMountError } from './errors.js';

export type { AdapterOptions, WebhookResponse } from './core.js';
export { WebhookMountError } from './errors.js';

/** Reads the body stream up to `maxBytes`, cancelling it as soon as the limit is passed. */
async function readLimited(request: Request, maxBytes: number): Promise<BodyReadResult> {
  // A locked stream is being read by someone else already: the bytes are as good as gone.
  if (request.bodyUsed || request.body?.locked === true) {
    throw new WebhookMountError('The request body was already read (request.json()?): the signed bytes are gone. Pass an unread Request.');
  }
  if (request.body === null) return { body: new Uint8Array(0) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return { tooLarge: true };
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { body };
}

/**
 * `(request: Request) => Promise<Response>` for fetch runtimes: Hono, Next.js route handlers,
 * Cloudflare Workers, Bun and Deno. Pass the untouched `Request`: if `request.json()` or
 * `request.text()` ran first, it answers 500 `raw_body_unavailable`. Web APIs only.
 *
 * @param receiver - A receiver from `createReceiver`, with or without an inbox.
 * @param options - The body limit, and when to answer.
 * @returns The fetch handler; it answers with the same status table as every adapter.
 *
 * @example
 * ```ts
 * import { createReceiver } from 'rack-webhooks';
 * import { createFetchHandler } from 'rack-webhooks/web';
 *
 * const receiver = createReceiver({ secrets: process.env.RACK_WEBHOOK_SECRETS! });
 * const handle = createFetchHandler(receiver);
 * export default { fetch: (request: Request) => handle(request) }; // a Cloudflare Worker, Bun.serve, Deno.serve
 * ```
 */
export function createFetchHandler(receiver: Receiver, options: AdapterOptions = {}): (request: Request) => Promise<Response> {
  const maxBodyBytes = resolveMaxBodyBytes(options);
  return async (request) => {
    const response = await handleWebhookRequest(
      receiver,
      { method: request.method, headers: request.headers, readBody: (limit) => readLimited(request, limit) },
      { ...options, maxBodyBytes },
    );
    return new Response(response.body, { status: response.status, headers: response.headers });
  };
}
