import type { AnyWebhookEvent } from '../events/types.js';
import type { Receiver, ReceiveOptions } from '../receiver/create-receiver.js';
import type { ReceiveOutcome } from '../receiver/types.js';
import type { HeadersInput } from '../receiver/headers.js';
import { getHeader } from '../receiver/headers.js';

/**
 * The one framework-free request path every adapter feeds: each adapter only says how to read the
 * method, the headers and the body, and how to write the answer.
 */
export interface AdapterOptions {
  /** Largest body read, in bytes; default 1 MiB. Larger bodies get 413 without being read. */
  maxBodyBytes?: number;
  /** Answer 200 before or after the handlers run; see `ReceiveOptions`. Default after. */
  acknowledge?: ReceiveOptions['acknowledge'];
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** What an adapter sends back: always JSON, `{ status }` or `{ error }`. */
export interface WebhookResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body as data, for adapters that log it (never holds a secret, a signature or the request body). */
  result: { status: ReceiveOutcome } | { error: string };
  /** On 200: the event that was received (for callers that print or log it). */
  event?: AnyWebhookEvent;
  /** On a refusal raised by the SDK: the error, whose code and message explain it. */
  cause?: unknown;
}

/** A body reader returns the bytes, or `tooLarge` as soon as the limit is passed (it stops reading). */
export type BodyReadResult = { body: Uint8Array | string } | { tooLarge: true };

export interface AdapterRequest {
  method: string | undefined;
  headers: HeadersInput;
  readBody: (maxBytes: number) => Promise<BodyReadResult>;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

export function respond(status: number, payload: { status: ReceiveOutcome } | { error: string }, headers?: Record<string, string>): WebhookResponse {
  return { status, headers: headers === undefined ? { ...JSON_HEADERS } : { ...JSON_HEADERS, ...headers }, body: JSON.stringify(payload), result: payload };
}

/** `application/json` or any `application/*+json`, with parameters such as `charset` allowed. */
export function isJsonContentType(value: string | readonly string[] | undefined): boolean {
  const text = Array.isArray(value) ? value[0] : value;
  if (typeof text !== 'string') return false;
  const mediaType = text.split(';', 1)[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'));
}

export function resolveMaxBodyBytes(options: AdapterOptions): number {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`maxBodyBytes must be a whole number >= 1, got ${String(limit)}`);
  return limit;
}

/** Every error `receive` can raise has a code and a status; anything else is our 500. */
export function errorResponse(error: unknown): WebhookResponse {
  const { code, status, message } = (error ?? {}) as { code?: unknown; status?: unknown; message?: unknown };
  if (code === 'raw_body_unavailable' && typeof message === 'string') {
    // A wiring mistake: the developer reading this response needs the fix, not just a code.
    return { status: 500, headers: { ...JSON_HEADERS }, body: JSON.stringify({ error: code, message }), result: { error: code }, cause: error };
  }
  if (typeof code === 'string' && typeof status === 'number' && status >= 400 && status < 600) {
    return { ...respond(status, { error: code }), cause: error };
  }
  return { ...respond(500, { error: 'internal_error' }), cause: error };
}

export async function handleWebhookRequest(
  receiver: Receiver,
  request: AdapterRequest,
  options: AdapterOptions & { maxBodyBytes: number },
): Promise<WebhookResponse> {
  if (request.method?.toUpperCase() !== 'POST') {
    return respond(405, { error: 'method_not_allowed' }, { allow: 'POST' });
  }
  if (!isJsonContentType(getHeader(request.headers, 'content-type'))) {
    return respond(415, { error: 'unsupported_media_type' });
  }
  const declared = Number(getHeader(request.headers, 'content-length'));
  if (Number.isFinite(declared) && declared > options.maxBodyBytes) {
    return respond(413, { error: 'payload_too_large' });
  }
  let read: BodyReadResult;
  try {
    read = await request.readBody(options.maxBodyBytes);
  } catch (error) {
    return errorResponse(error);
  }
  if ('tooLarge' in read) return respond(413, { error: 'payload_too_large' });
  try {
    const receiveOptions = options.acknowledge === undefined ? {} : { acknowledge: options.acknowledge };
    const { outcome, event } = await receiver.receive({ body: read.body, headers: request.headers }, receiveOptions);
    return { ...respond(200, { status: outcome }), event };
  } catch (error) {
    return errorResponse(error);
  }
}
