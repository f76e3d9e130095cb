import type { AnyWebhookEvent } from '../events/types.js';
import type { ReceiveOptions } from '../receiver/create-receiver.js';
import type { AnyReceiver as Receiver } from '../receiver/types.js';
import type { ReceiveOutcome } from '../receiver/types.js';
import type { HeadersInput } from '../receiver/headers.js';
import { getHeader } from '../receiver/headers.js';
import { WebhookError } from '../shared/webhook-error.js';
import { WebhookVerificationError } from '../signature/errors.js';
import { REFUSAL_FACTS, definedFields } from '../receiver/log.js';
import { WebhookMountError } from './errors.js';

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
  /** The HTTP status (see the status table in docs/errors.md). */
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
  /**
   * Reads the body up to `maxBytes`. A framework that has already read it (Fastify) answers at
   * once, without a promise.
   */
  readBody: (maxBytes: number) => BodyReadResult | Promise<BodyReadResult>;
  /** When the request arrived, as `performance.now()`, when it was before this call (Fastify has read the body by then). */
  startTime?: number;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The three 200 bodies, serialised once. */
const OK_BODIES: Record<ReceiveOutcome, string> = {
  processed: '{"status":"processed"}',
  accepted: '{"status":"accepted"}',
  duplicate: '{"status":"duplicate"}',
  ignored: '{"status":"ignored"}',
};

export function respond(
  status: number,
  payload: { status: ReceiveOutcome } | { error: string },
  headers?: Record<string, string>,
): WebhookResponse {
  const body = 'status' in payload && status === 200 ? OK_BODIES[payload.status] : JSON.stringify(payload);
  return {
    status,
    headers: headers === undefined ? { 'content-type': JSON_CONTENT_TYPE } : { 'content-type': JSON_CONTENT_TYPE, ...headers },
    body,
    result: payload,
  };
}

/**
 * What a refusal's log record says beyond its code: for a verification error, its message (which
 * names the headers seen, the encoding that would have matched, every cause of an unsigned
 * delivery, and never a secret, a signature or the body) and its structured facts. Other errors'
 * messages may quote the body, so they add nothing.
 */
export function refusalLogFields(cause: unknown): Record<string, unknown> {
  return cause instanceof WebhookVerificationError ? { reason: cause.message, ...definedFields(cause, REFUSAL_FACTS) } : {};
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

/** Every error the SDK raises is a WebhookError, with its code and status; anything else is our 500. */
export function errorResponse(error: unknown): WebhookResponse {
  if (error instanceof WebhookMountError) {
    // A wiring mistake: the developer reading this response needs the fix, not just a code.
    const body = JSON.stringify({ error: error.code, message: error.message });
    return { status: error.status, headers: { 'content-type': JSON_CONTENT_TYPE }, body, result: { error: error.code }, cause: error };
  }
  if (error instanceof WebhookError) return { ...respond(error.status, { error: error.code }), cause: error };
  return { ...respond(500, { error: 'internal_error' }), cause: error };
}

/** The answers that need no body: method, content type and the declared length. */
function refuseBeforeBody(method: string | undefined, headers: HeadersInput, maxBodyBytes: number): WebhookResponse | undefined {
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
function receiveToResponse(
  receiver: Receiver,
  body: Uint8Array | string,
  headers: HeadersInput,
  receiveOptions: ReceiveOptions,
): Promise<WebhookResponse> {
  return receiver.receive({ body, headers }, receiveOptions).then(({ outcome, event }) => {
    const response: WebhookResponse = respond(200, { status: outcome });
    response.event = event;
    return response;
  }, errorResponse);
}

function receiveOptionsOf(options: AdapterOptions): ReceiveOptions {
  return options.acknowledge === undefined ? {} : { acknowledge: options.acknowledge };
}

/**
 * The whole request path of every adapter: refuse what needs no body, read the body, receive it,
 * and turn the outcome or the error into the answer. Never rejects.
 */
export function handleWebhookRequest(
  receiver: Receiver,
  request: AdapterRequest,
  options: AdapterOptions & { maxBodyBytes: number },
): Promise<WebhookResponse> {
  // Refused before the receiver saw the delivery: reported to it (the inbox's count, telemetry).
  const startTime = request.startTime ?? performance.now();
  const early = (response: WebhookResponse, refusal?: WebhookMountError): Promise<WebhookResponse> =>
    Promise.resolve(receiver.reportRefusal?.(refusal ?? (response.result as { error: string }).error, { startTime })).then(() => response);
  const refused = refuseBeforeBody(request.method, request.headers, options.maxBodyBytes);
  if (refused !== undefined) return early(refused);
  const received = (read: BodyReadResult): Promise<WebhookResponse> =>
    'tooLarge' in read
      ? early(respond(413, { error: 'payload_too_large' }))
      : receiveToResponse(receiver, read.body, request.headers, receiveOptionsOf(options));
  // A consumed body: the rack never reads answers, so the app's logger and onError must hear it.
  const readFailed = (error: unknown): Promise<WebhookResponse> =>
    early(bodyReadFailed(error), error instanceof WebhookMountError ? error : undefined);
  let read: BodyReadResult | Promise<BodyReadResult>;
  try {
    read = request.readBody(options.maxBodyBytes);
  } catch (error) {
    return readFailed(error);
  }
  return read instanceof Promise ? read.then(received, readFailed) : received(read);
}

/**
 * A mounting mistake has its own code; anything else is the request's own body failing midway
 * (the client aborted, the stream errored): the request is at fault, not the receiver.
 */
function bodyReadFailed(error: unknown): WebhookResponse {
  return error instanceof WebhookError ? errorResponse(error) : { ...respond(400, { error: 'body_read_failed' }), cause: error };
}
