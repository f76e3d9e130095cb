import type { Channel, TracingChannel } from 'node:diagnostics_channel';
import type { ReceiveResult } from './delivery.js';

/**
 * The receiver's two `diagnostics_channel` channels: how telemetry (src/telemetry, the
 * OpenTelemetry code) observes deliveries without the core carrying its code, the way undici and
 * Fastify publish and instrumentations subscribe. Reached through `process.getBuiltinModule`
 * (Node 20.16+, Bun, Deno, workerd with nodejs_compat); where it is absent there are none and a
 * delivery costs one comparison, as it does while nothing subscribes (`hasSubscribers`).
 */

/**
 * What `rack-webhooks:receive`, a TracingChannel around each `receive()`, publishes: `start`,
 * `end`, then `asyncStart` and `asyncEnd` with `result` (the outcome) or `error` (the refusal,
 * also on `error`).
 */
export interface ReceiveTraceMessage {
  /** Set at `asyncStart`: what `receive()` resolved with. */
  result?: ReceiveResult;
  /** Set at `error`: what `receive()` rejected with. */
  error?: unknown;
  /**
   * Set by a subscriber at `start` (the first one wins): `receive()` then runs inside it. The
   * OpenTelemetry subscriber makes its `receive` span the active one there, so the handlers' spans
   * are its children and an inbox stores its trace context with the row.
   */
  runInside?: <T>(run: () => T) => T;
}

/** What `rack-webhooks:refusal` publishes for each `receiver.reportRefusal()`. */
export interface RefusalMessage {
  /** The refusal's code: `method_not_allowed`, `payload_too_large`, `raw_body_unavailable`... */
  readonly code: string;
  /** When the request arrived, as `performance.now()`. */
  readonly startTime: number;
}

const channels = /* @__PURE__ */ (() =>
  (
    globalThis as { process?: { getBuiltinModule?(id: string): typeof import('node:diagnostics_channel') | undefined } }
  ).process?.getBuiltinModule?.('node:diagnostics_channel'))();

export const RECEIVE_CHANNEL = 'rack-webhooks:receive';
export const REFUSAL_CHANNEL = 'rack-webhooks:refusal';

export const receiveChannel: TracingChannel<unknown, ReceiveTraceMessage> | undefined =
  /* @__PURE__ */ channels?.tracingChannel(RECEIVE_CHANNEL);
export const refusalChannel = /* @__PURE__ */ channels?.channel(REFUSAL_CHANNEL) as Channel<RefusalMessage> | undefined;
