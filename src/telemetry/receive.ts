import type { Attributes, Context, Span } from '@opentelemetry/api';
import { receiverRuntime } from '../receiver/inbox-contract.js';
import type { AnyReceiver, ReceiveResult } from '../receiver/types.js';
import { ATTR, MESSAGING_SYSTEM, SPAN_KIND_CONSUMER, SPAN_STATUS_ERROR, appOf, errorType } from './conventions.js';
import { currentInstruments, type Instruments } from './instruments.js';
import { activeContext, currentTracer, withSpan } from './otel-global.js';

/**
 * Spans and metrics for received deliveries. The receiver core (in the Worker bundle, under its
 * 40 kB budget) holds none of this: the inbox (`createReceiver({ inbox })`) and the Node adapters
 * (`rack-webhooks/node`, `/express`, `/fastify`) wrap the receiver's `receive` once, and the wrap
 * costs one property read per delivery when no OpenTelemetry SDK is registered.
 */
const INSTRUMENTED = Symbol.for('rack-webhooks.telemetry.receiver');

const RECEIVE: Attributes = {
  [ATTR.system]: MESSAGING_SYSTEM,
  [ATTR.operationType]: 'receive',
  [ATTR.operationName]: 'receive',
};

type Receive = AnyReceiver['receive'];

/**
 * Wraps `receiver.receive` (in place, once: the receiver the application holds, its chained
 * `on()` calls and every adapter then see the same observed method) unless the receiver was
 * created with `telemetry: false`.
 */
export function instrumentReceiver<R extends AnyReceiver>(receiver: R): R {
  const marked = receiver as R & { [INSTRUMENTED]?: true };
  if (marked[INSTRUMENTED] === true || receiverRuntime(receiver)?.telemetry === false) return receiver;
  Object.defineProperty(receiver, INSTRUMENTED, { value: true, enumerable: false });
  const receive: Receive = receiver.receive;
  (receiver as { receive: Receive }).receive = (delivery, options) => observeReceive(() => receive.call(receiver, delivery, options));
  return receiver;
}

function observeReceive(run: () => Promise<ReceiveResult>): Promise<ReceiveResult> {
  const tracer = currentTracer();
  const instruments = currentInstruments();
  if (tracer === undefined && instruments === undefined) return run();
  const started = performance.now();
  const parent: Context | undefined = activeContext();
  // A child of the HTTP server span when one is active (instrumentation-http, a framework's own).
  const span = tracer?.startSpan('receive', { kind: SPAN_KIND_CONSUMER, attributes: RECEIVE }, parent);
  let result: Promise<ReceiveResult>;
  try {
    result = span === undefined ? run() : withSpan(parent, span, run);
  } catch (error) {
    result = Promise.reject(error);
  }
  return result.then(
    (received) => {
      finish(span, instruments, started, received, undefined);
      return received;
    },
    (error: unknown) => {
      finish(span, instruments, started, undefined, error);
      throw error;
    },
  );
}

function finish(
  span: Span | undefined,
  instruments: Instruments | undefined,
  started: number,
  received: ReceiveResult | undefined,
  error: unknown,
): void {
  const attributes: Attributes = { ...RECEIVE };
  if (received === undefined) {
    attributes[ATTR.outcome] = 'refused';
    attributes[ATTR.errorType] = errorType(error);
  } else {
    attributes[ATTR.outcome] = received.outcome;
    attributes[ATTR.destination] = received.event.action;
  }
  instruments?.received.add(1, attributes);
  instruments?.receiveDuration.record((performance.now() - started) / 1000, attributes);
  if (span === undefined) return;
  if (received !== undefined) {
    const app = appOf(received.event.data);
    span.updateName(`receive ${received.event.action}`);
    span.setAttributes({ ...attributes, [ATTR.action]: received.event.action, ...(app === undefined ? {} : { [ATTR.app]: app }) });
    if (received.id !== undefined) span.setAttribute(ATTR.messageId, received.id);
  } else {
    span.setAttributes(attributes);
    // The code only: a payload error's message may quote the body.
    span.setStatus({ code: SPAN_STATUS_ERROR, message: attributes[ATTR.errorType] as string });
  }
  span.end();
}

/** What an adapter answers before `receive()` runs: the request never reached the receiver. */
const BEFORE_RECEIVE = /* @__PURE__ */ new Set([
  'method_not_allowed',
  'unsupported_media_type',
  'payload_too_large',
  'body_read_failed',
  'raw_body_unavailable',
  'bad_request', // Fastify's own 4xx (a content-length that does not match the body)
]);

/**
 * Counts (and traces) a request that a Node adapter refused before the receiver saw it: a body
 * over the limit, a consumed body, a wrong method or content type. The rack will not resend it.
 */
export function recordAdapterRefusal(receiver: AnyReceiver, result: { error: string } | { status: string }, started: number): void {
  if (!('error' in result) || !BEFORE_RECEIVE.has(result.error) || receiverRuntime(receiver)?.telemetry === false) return;
  const tracer = currentTracer();
  const instruments = currentInstruments();
  if (tracer === undefined && instruments === undefined) return;
  const attributes: Attributes = { ...RECEIVE, [ATTR.outcome]: 'refused', [ATTR.errorType]: result.error };
  instruments?.received.add(1, attributes);
  instruments?.receiveDuration.record((performance.now() - started) / 1000, attributes);
  const span = tracer?.startSpan(
    'receive',
    { kind: SPAN_KIND_CONSUMER, attributes, startTime: performance.timeOrigin + started },
    activeContext(),
  );
  span?.setStatus({ code: SPAN_STATUS_ERROR, message: result.error });
  span?.end();
}
