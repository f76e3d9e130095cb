import { DEFAULT_HEADER_NAME } from '../receiver/create-receiver.js';
import { sign, signSync, type SignOptions } from '../signature/sign.js';

/** Options of {@link createSignedRequest}: those of `sign`, and the header's name. */
export interface SignedRequestOptions extends SignOptions {
  /**
   * The signature header's name (written in lower case).
   *
   * @defaultValue `'Service-Signature'`
   */
  headerName?: string;
}

/** Exactly what a rack sends: the body bytes and the headers, ready for fetch, supertest or inject(). */
export interface SignedRequest {
  /** Always `'POST'`, as the rack sends. */
  method: 'POST';
  /** The body as text; `bytes` are its UTF-8 bytes, the ones the signature covers. */
  body: string;
  /** The body's UTF-8 bytes. */
  bytes: Uint8Array;
  /** `content-type: application/json` and the signature header, names in lower case. */
  headers: Record<string, string>;
}

const utf8 = new TextEncoder();

function bodyOf(eventOrBody: object | string): string {
  return typeof eventOrBody === 'string' ? eventOrBody : JSON.stringify(eventOrBody);
}

function build(body: string, header: string, headerName: string | undefined): SignedRequest {
  return {
    method: 'POST',
    body,
    bytes: utf8.encode(body),
    headers: { 'content-type': 'application/json', [(headerName ?? DEFAULT_HEADER_NAME).toLowerCase()]: header },
  };
}

/**
 * Signs an event (serialised once) or a raw body (sent as is) the way the rack does, and returns
 * the exact body and headers the rack would send. Works on every runtime.
 *
 * @param eventOrBody - An event object (e.g. from {@link createTestEvent}), or a raw body sent byte for byte.
 * @param options - The keys (1 to 4), the timestamp, the header's name.
 * @returns The method, body and headers, for fetch, supertest or Fastify's `inject()`.
 *
 * @example
 * ```ts
 * import { createSignedRequest, createTestEvent, toFetchRequest } from 'rack-webhooks/testing';
 *
 * const event = createTestEvent('app:budget:auto-shutdown:fired', { data: { app: 'billing-api' } });
 * const request = await createSignedRequest(event, { secrets: 'test-key' });
 * const response = await handler(toFetchRequest('http://localhost/webhooks', request));
 * console.log(response.status); // 200, with a receiver whose secrets are 'test-key'
 * ```
 */
export async function createSignedRequest(eventOrBody: object | string, options: SignedRequestOptions): Promise<SignedRequest> {
  const body = bodyOf(eventOrBody);
  return build(body, await sign(body, options), options.headerName);
}

/**
 * {@link createSignedRequest} without the promise. Needs `node:crypto` (Node 20.16+, Bun, Deno).
 *
 * @param eventOrBody - An event object, or a raw body sent byte for byte.
 * @param options - The keys (1 to 4), the timestamp, the header's name.
 * @returns The method, body and headers.
 *
 * @example
 * ```ts
 * import { createSignedRequestSync, createTestEvent } from 'rack-webhooks/testing';
 *
 * const { body, headers } = createSignedRequestSync(createTestEvent('app:budget:cap'), { secrets: 'test-key' });
 * await app.inject({ method: 'POST', url: '/webhooks', headers, payload: body }); // Fastify
 * ```
 */
export function createSignedRequestSync(eventOrBody: object | string, options: SignedRequestOptions): SignedRequest {
  const body = bodyOf(eventOrBody);
  return build(body, signSync(body, options), options.headerName);
}

/** A fetch `Request` for a signed request, e.g. for `createFetchHandler` or `app.fetch` in Hono. */
export function toFetchRequest(url: string | URL, request: SignedRequest): Request {
  return new Request(url, { method: request.method, headers: request.headers, body: request.body });
}
