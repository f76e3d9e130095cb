import type { Attributes, Context, Span } from '@opentelemetry/api';
import type { TracingChannelSubscribers } from 'node:diagnostics_channel';
import { RECEIVE_CHANNEL, REFUSAL_CHANNEL, type ReceiveTraceMessage, type RefusalMessage } from '../receiver/channels.js';
import type { ReceiveResult } from '../receiver/types.js';
import { ATTR, MESSAGING_SYSTEM, SPAN_KIND_CONSUMER, SPAN_STATUS_ERROR, appOf, errorType } from './conventions.js';
import { currentInstruments, type Instruments } from './instruments.js';
import { activeContext, currentTracer, openTelemetryApi, withSpan } from './otel-api.js';

/**
 * Spans and metrics for received deliveries, from what receivers publish on their
 * `diagnostics_channel` channels (src/receiver/channels.ts): `rack-webhooks:receive` around each
 * `receive()`, called by an adapter or directly, and `rack-webhooks:refusal` for each
 * `receiver.reportRefusal()`. The receiver core (in the Worker bundle, under its 40 kB budget)
 * holds none of this code; the inbox and the Node adapters subscribe once, and while nothing
 * subscribes a delivery costs a receiver one `hasSubscribers` check.
 */
const RECEIVE: Attributes = {
  [ATTR.system]: MESSAGING_SYSTEM,
  [ATTR.operationType]: 'receive',
  [ATTR.operationName]: 'receive',
};

interface Observed {
  readonly span: Span | undefined;
  readonly instruments: Instruments | undefined;
  readonly started: number;
}

/** The receives this copy of the package observes: another copy (a CJS build beside the ESM one) leaves them alone. */
const observing = new WeakMap<ReceiveTraceMessage, Observed>();

const receiveSubscribers: TracingChannelSubscribers<ReceiveTraceMessage> = {
  start(message) {
    if (message.runInside !== undefined) return;
    const tracer = currentTracer();
    const instruments = currentInstruments();
    if (tracer === undefined && instruments === undefined) return;
    const parent: Context | undefined = activeContext();
    // A child of the HTTP server span when one is active (instrumentation-http, a framework's own).
    const span = tracer?.startSpan('receive', { kind: SPAN_KIND_CONSUMER, attributes: RECEIVE }, parent);
    observing.set(message, { span, instruments, started: performance.now() });
    // receive() runs inside the span: the handlers' spans are its children, an inbox stores its trace context.
    message.runInside = span === undefined ? (run) => run() : (run) => withSpan(parent, span, run);
  },
  end() {},
  asyncStart() {},
  asyncEnd(message) {
    const observed = observing.get(message);
    if (observed === undefined) return;
    observing.delete(message);
    finish(observed, 'error' in message ? undefined : message.result, message.error);
  },
  error() {},
};

/** A request an adapter refused before `receive()` ran (`receiver.reportRefusal()`): a refused `receive` span and its count. */
function observeRefusal(message: unknown): void {
  const { code, startTime } = message as RefusalMessage;
  const tracer = currentTracer();
  const instruments = currentInstruments();
  if (tracer === undefined && instruments === undefined) return;
  const attributes: Attributes = { ...RECEIVE, [ATTR.outcome]: 'refused', [ATTR.errorType]: code };
  instruments?.received.add(1, attributes);
  instruments?.receiveDuration.record((performance.now() - startTime) / 1000, attributes);
  const span = tracer?.startSpan(
    'receive',
    { kind: SPAN_KIND_CONSUMER, attributes, startTime: performance.timeOrigin + startTime },
    activeContext(),
  );
  span?.setStatus({ code: SPAN_STATUS_ERROR, message: code });
  span?.end();
}

let subscribed = false;

/**
 * Turns on OpenTelemetry spans and metrics for every receiver in this process, those called
 * directly (`receiver.receive()` from a framework without an adapter here) or through
 * `createFetchHandler` on Node included. The Node adapters and `createInbox` call it themselves;
 * call it once (say, in the file that starts the SDK) when you use neither. Nothing is emitted
 * until an SDK is registered; without `@opentelemetry/api` installed it subscribes nothing, and
 * receivers then cost one `hasSubscribers` check a delivery. Idempotent.
 *
 * @example
 * ```ts
 * import { observeReceivers } from 'rack-webhooks/node';
 *
 * observeReceivers(); // every receiver's receive() is traced from here on, once an SDK is registered
 * ```
 */
export function observeReceivers(): void {
  if (subscribed) return;
  subscribed = true;
  if (openTelemetryApi() === undefined) return;
  const channels = globalThis.process?.getBuiltinModule?.('node:diagnostics_channel') as
    typeof import('node:diagnostics_channel') | undefined;
  channels?.tracingChannel<unknown, ReceiveTraceMessage>(RECEIVE_CHANNEL).subscribe(receiveSubscribers);
  channels?.subscribe(REFUSAL_CHANNEL, observeRefusal);
}

function finish({ span, instruments, started }: Observed, received: ReceiveResult | undefined, error: unknown): void {
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
