import { WebhookVerificationError } from './errors.js';

/** The raw request body exactly as received. */
export type RawPayload = string | Uint8Array | ArrayBuffer;

const FIX =
  'The signature covers the exact bytes the rack sent, so pass the raw request body. ' +
  'Express: mount express.raw({ type: "application/json" }) on the webhook route (before any ' +
  'express.json()) and pass req.body, or use rack-webhooks/express. ' +
  'Fastify: register a content-type parser with { parseAs: "buffer" } for the route, or use ' +
  'rack-webhooks/fastify. Next.js route handlers and other fetch runtimes: pass ' +
  'await request.text() (or request.arrayBuffer()), never request.json().';

/**
 * Strings are hashed as their UTF-8 bytes; binary input is hashed untouched, so a BOM or bytes
 * that are not valid UTF-8 still verify. Anything else is a parsed body and is refused.
 */
export function toRawPayload(payload: unknown): Uint8Array | string {
  if (typeof payload === 'string' || payload instanceof Uint8Array) return payload;
  try {
    if (payload instanceof ArrayBuffer) return new Uint8Array(payload);
    if (ArrayBuffer.isView(payload)) {
      return new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength);
    }
  } catch {
    // The engine refuses a view over a detached buffer (transferred to a worker, or structuredClone'd away).
    throw new WebhookVerificationError(
      'payload_not_raw',
      "The payload's ArrayBuffer is detached (transferred elsewhere), so its bytes are gone. Pass the body before transferring it.",
    );
  }
  const what = payload === null || payload === undefined ? `${payload}` : Array.isArray(payload) ? 'an array' : `a ${typeof payload}`;
  throw new WebhookVerificationError('payload_not_raw', `The payload is ${what}, not the raw request body. ${FIX}`);
}
