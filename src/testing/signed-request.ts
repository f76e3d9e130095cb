import { DEFAULT_HEADER_NAME } from '../receiver/create-receiver.js';
import { sign, signSync, type SignOptions } from '../signature/sign.js';

export interface SignedRequestOptions extends SignOptions {
  /** Default `Service-Signature`. */
  headerName?: string;
}

/** Exactly what a rack sends: the body bytes and the headers, ready for fetch, supertest or inject(). */
export interface SignedRequest {
  method: 'POST';
  /** The body as text; `bytes` are its UTF-8 bytes, the ones the signature covers. */
  body: string;
  bytes: Uint8Array;
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

/** Signs an event (serialised once) or a raw body (sent as is) the way the rack does. */
export async function createSignedRequest(eventOrBody: object | string, options: SignedRequestOptions): Promise<SignedRequest> {
  const body = bodyOf(eventOrBody);
  return build(body, await sign(body, options), options.headerName);
}

/** `createSignedRequest` without the promise (needs node:crypto). */
export function createSignedRequestSync(eventOrBody: object | string, options: SignedRequestOptions): SignedRequest {
  const body = bodyOf(eventOrBody);
  return build(body, signSync(body, options), options.headerName);
}

/** A fetch `Request` for a signed request, e.g. for `createFetchHandler` or `app.fetch` in Hono. */
export function toFetchRequest(url: string | URL, request: SignedRequest): Request {
  return new Request(url, { method: request.method, headers: request.headers, body: request.body });
}
