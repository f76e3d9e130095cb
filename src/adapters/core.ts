import type { AnyWebhookEvent } from '../events/types.js';
import type { ReceiveOptions } from '../receiver/create-receiver.js';
import type { AnyReceiver as Receiver } from '../receiver/types.js';
import type { ReceiveOutcome } from '../receiver/types.js';
import type { HeadersInput } from '../receiver/headers.js';
import { getHeader } from '../receiver/headers.js';

/**
 * The one framework-free request path every adapter feeds: each adapter only says how to read the
 * method, the headers and the body, and how to write the answer.
 */
/** Options every adapter takes. */
export interface AdapterOptions {
  /**
   * Largest body read, in bytes. A larger body gets 413 as soon as the declared length or the
   * bytes read pass it, and nothing past it is kept.
   *
   * @defaultValue `1048576` (1 MiB); Fastify's own `bodyLimit` in the Fastify plugin
   */
  maxBodyBytes?: number;
  /**
   * Answer 200 after the handlers ran, or as soon as the delivery is verified, parsed and claimed
   * (`'before-handlers'`, for handlers slower than the rack's dispatch timeout); see `ReceiveOptions`.
   *
   * @defaultValue `'after-handlers'`
   */
  acknowledge?: ReceiveOptions['acknowledge'];
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** What an adapter sends back: always JSON, `{ status }` or `{ error }`. */
export interface WebhookResponse {
  /** The HTTP status (see the status table in the README). */
  status: number;
  /** The response headers: `content-type`, and `allow` on a 405. */
  headers: Record<string, string>;
  /** The JSON body, serialised. */
  body: string;
  /** The body as data, for adapters that log it (never holds a secret, a signature or the request body). */
  result:
    | {
        /** The receiver's outcome, on a 200. */
        status: ReceiveOutcome;
      }
    | {
        /** The error code, on a refusal: `signature_mismatch`, `payload_too_large`, ... */
        error: string;
      };
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

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The three 200 bodies, serialised once. */
const OK_BODIES: Record<ReceiveOutcome, string> = {
  processed: '{"status":"processed"}',
  accepted: '{"status":"accepted"}',
  duplicate: '{"status":"duplicate"}',
  ignored: '{"status":"ignored"}',
};

export function respond(status: number, payload: { status: ReceiveOutcome } | { error: string }, headers?: Record<string, string>): WebhookResponse {
  const body = 'status' in payload && status === 200 ? OK_BODIES[payload.status] : JSON.stringify(payload);
  return { status, headers: headers === undefined ? { 'content-type': JSON_CONTENT_TYPE } : { 'content-type': JSON_CONTENT_TYPE, ...headers }, body, result: payload };
}

/** `application/json` or any `application/*+json`, with parameters such as `charset` allowed. */
export function isJsonContentType(value: string | readonly string[] | undefined): boolean {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === 'application/json') return true; // what the rack sends
  if (typeof text !== 'string') return false;
  const mediaType = text.split(';', 1)[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'));
}

export function resolveMaxBodyBytes(options: AdapterOptions): number {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`maxBodyBytes must be a whole number >= 1, got ${String(limit)}`);
  return limit;
}

function hasErrorCode(error: unknown): boolean {
  return typeof (error as { code?: unknown } | null)?.code === 'string' && typeof (error as { status?: unknown }).status === 'number';
}

/** Every error `receive` can raise has a code and a status; anything else is our 500. */
export function errorResponse(error: unknown): WebhookResponse {
  const { code, status, message } = (error ?? {}) as { code?: unknown; status?: unknown; message?: unknown };
  if (code === 'raw_body_unavailable' && typeof message === 'string') {
    // A wiring mistake: the developer reading this response needs the fix, not just a code.
    return { status: 500, headers: { 'content-type': JSON_CONTENT_TYPE }, body: JSON.stringify({ error: code, message }), result: { error: code }, cause: error };
  }
  if (typeof code === 'string' && typeof status === 'number' && status >= 400 && status < 600) {
    return { ...respond(status, { error: code }), cause: error };
  }
  return { ...respond(500, { error: 'internal_error' }), cause: error };
}

/** The answers that need no body: method, content type and the declared length. */
export function refuseBeforeBody(method: string | undefined, headers: HeadersInput, maxBodyBytes: number): WebhookResponse | undefined {
  if (method !== 'POST' && method?.toUpperCase() !== 'POST') {
    return respond(405, { error: 'method_not_allowed' }, { allow: 'POST' });
  }
  if (!isJsonContentType(getHeader(headers, 'content-type'))) {
    return respond(415, { error: 'unsupported_media_type' });
  }
  const declared = getHeader(headers, 'content-length');
  if (declared !== undefined && Number(declared) > maxBodyBytes) {
    return respond(413, { error: 'payload_too_large' });
  }
  return undefined;
}

/** Hands the body to the receiver and turns the outcome, or the error, into the response. */
export function receiveToResponse(
  receiver: Receiver,
  body: Uint8Array | string,
  headers: HeadersInput,
  receiveOptions: ReceiveOptions,
): Promise<WebhookResponse> {
  return receiver.receive({ body, headers }, receiveOptions).then(
    ({ outcome, event }) => {
      const response: WebhookResponse = respond(200, { status: outcome });
      response.event = event;
      return response;
    },
    errorResponse,
  );
}

export function receiveOptionsOf(options: AdapterOptions): ReceiveOptions {
  return options.acknowledge === undefined ? {} : { acknowledge: options.acknowledge };
}

export async function handleWebhookRequest(
  receiver: Receiver,
  request: AdapterRequest,
  options: AdapterOptions & { maxBodyBytes: number },
): Promise<WebhookResponse> {
  const refused = refuseBeforeBody(request.method, request.headers, options.maxBodyBytes);
  if (refused !== undefined) return refused;
  let read: BodyReadResult;
  try {
    read = await request.readBody(options.maxBodyBytes);
  } catch (error) {
    // A mounting mistake has its own code; anything else is the request's own body failing midway
    // (the client aborted, the stream errored): the request is at fault, not the receiver.
    return hasErrorCode(error) ? errorResponse(error) : { ...respond(400, { error: 'body_read_failed' }), cause: error };
  }
  if ('tooLarge' in read) return respond(413, { error: 'payload_too_large' });
  return receiveToResponse(receiver, read.body, request.headers, receiveOptionsOf(options));
}
