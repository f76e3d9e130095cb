/**
 * Every span, metric and attribute name this package emits, in one place (the README's table lists
 * the same). Where the OpenTelemetry semantic conventions have a name (messaging spans and
 * metrics, `error.type`), it is used; what they have none for is under `rack_webhooks.`.
 */

/** `messaging.system`: this package's inbox and receiver, the "messaging system" of the rack's webhooks. */
export const MESSAGING_SYSTEM = 'rack-webhooks';

/** SpanKind.CONSUMER and SpanStatusCode.ERROR, as numbers: fixed by the specification, no import needed. */
export const SPAN_KIND_CONSUMER = 4;
export const SPAN_STATUS_ERROR = 2;

export const ATTR = {
  system: 'messaging.system',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  /** The event's action: the rack's "topic" (a bounded catalog), as semconv's destination. */
  destination: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  errorType: 'error.type',
  action: 'rack_webhooks.action',
  /** On spans only: metrics keep to bounded attributes. */
  app: 'rack_webhooks.app',
  attempt: 'rack_webhooks.delivery.attempt',
  outcome: 'rack_webhooks.outcome',
  table: 'rack_webhooks.inbox.table',
  state: 'rack_webhooks.state',
} as const;

export const METRIC = {
  /** Counter of deliveries that reached a receiver, by outcome and refusal code. */
  received: 'messaging.client.consumed.messages',
  /** Histogram, seconds: from the request reaching the receiver to its answer. */
  receiveDuration: 'messaging.client.operation.duration',
  /** Histogram, seconds: one handler attempt in a worker, by outcome. */
  processDuration: 'messaging.process.duration',
  /** Counter of deliveries that went dead (no attempts left). */
  dead: 'rack_webhooks.deliveries.dead',
  /** Gauge: deliveries in the inbox table, by state. */
  deliveries: 'rack_webhooks.inbox.deliveries',
  /** Gauge, seconds: how long the oldest pending delivery has waited. */
  oldestPendingAge: 'rack_webhooks.inbox.oldest_pending.age',
  /** UpDownCounter (observable): workers running in this process. */
  liveWorkers: 'rack_webhooks.workers.live',
} as const;

/**
 * Buckets for the duration histograms, in seconds: the SDK's default ones are for milliseconds
 * (0 to 10000) and would put every delivery in the first bucket. These are semconv's advice for
 * `messaging.*.duration`.
 */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The app an event is about, when it names one (never more than the event's own `data.app`). */
export function appOf(data: unknown): string | undefined {
  const app = (data as Record<string, unknown> | null | undefined)?.['app'];
  return typeof app === 'string' ? app : undefined;
}

/** An error's code for `error.type`: the SDK's own codes; else the class name; never a message. */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (typeof code === 'string' && /^[a-z_]{1,64}$/.test(code)) return code;
  return error instanceof Error && /^[A-Za-z_$][\w$]{0,63}$/.test(error.name) ? error.name : '_OTHER';
}
