import type { Attributes, Link } from '@opentelemetry/api';
import { ATTR, MESSAGING_SYSTEM, SPAN_KIND_CONSUMER, SPAN_STATUS_ERROR } from './conventions.js';
import { currentInstruments } from './instruments.js';
import { activeContext, currentTracer, withSpan } from './otel-api.js';
import { parseTraceparent } from './trace-context.js';

/** One claimed delivery, as the worker's claim returns it. */
export interface AttemptFacts {
  readonly id: string;
  readonly attempt: number;
  readonly action: string | undefined;
  readonly app: string | undefined;
  /** The receiving span's `traceparent`, stored with the row; null when none was active. */
  readonly traceContext: string | undefined;
}

/** How the worker's attempt ended (run-delivery's `Outcome` kinds). */
export type AttemptOutcomeKind = 'succeeded' | 'failed' | 'dead' | 'lease-lost' | 'unrecorded';

/** `rack_webhooks.outcome` of a `process` span, and `error.type` when it failed. */
const OUTCOMES: Record<AttemptOutcomeKind, readonly [outcome: string, errorType: string | undefined]> = {
  succeeded: ['done', undefined],
  failed: ['retry', 'handler_failed'],
  dead: ['dead', 'handler_failed'],
  'lease-lost': ['lease_lost', 'lease_lost'],
  unrecorded: ['unrecorded', 'inbox_unavailable'],
};

export interface WorkerTelemetry {
  /** Runs one attempt inside its `process` span (the handlers' own spans are its children). */
  attempt<T extends { readonly kind: AttemptOutcomeKind }>(facts: AttemptFacts, run: () => Promise<T>): Promise<T>;
  /** Deliveries that went dead without an attempt of this worker finishing (their worker stopped). */
  wentDead(action: string): void;
}

const OFF: WorkerTelemetry = { attempt: (_facts, run) => run(), wentDead: () => {} };

/**
 * The worker's spans and metrics: a `process` span per handler attempt, a new trace linked to the
 * span that received the delivery (semconv: a consumer's processing links to the message's
 * creation context; the receive may be hours earlier, on another process), its duration by
 * outcome, and the count of deliveries that went dead.
 */
export function workerTelemetry(enabled: boolean, table: string): WorkerTelemetry {
  if (!enabled) return OFF;
  const base: Attributes = {
    [ATTR.system]: MESSAGING_SYSTEM,
    [ATTR.operationType]: 'process',
    [ATTR.operationName]: 'process',
  };
  return {
    attempt(facts, run) {
      const tracer = currentTracer();
      const instruments = currentInstruments();
      if (tracer === undefined && instruments === undefined) return run();
      const started = performance.now();
      const attributes: Attributes = { ...base, ...(facts.action === undefined ? {} : { [ATTR.destination]: facts.action }) };
      const linked = parseTraceparent(facts.traceContext);
      const links: Link[] = linked === undefined ? [] : [{ context: linked }];
      const span = tracer?.startSpan(
        facts.action === undefined ? 'process' : `process ${facts.action}`,
        {
          kind: SPAN_KIND_CONSUMER,
          root: true,
          links,
          attributes: {
            ...attributes,
            [ATTR.messageId]: facts.id,
            [ATTR.attempt]: facts.attempt,
            [ATTR.table]: table,
            ...(facts.action === undefined ? {} : { [ATTR.action]: facts.action }),
            ...(facts.app === undefined ? {} : { [ATTR.app]: facts.app }),
          },
        },
        activeContext(),
      );
      const finish = (kind: AttemptOutcomeKind) => {
        const [outcome, errorType] = OUTCOMES[kind];
        const measured: Attributes = {
          ...attributes,
          [ATTR.outcome]: outcome,
          ...(errorType === undefined ? {} : { [ATTR.errorType]: errorType }),
        };
        instruments?.processDuration.record((performance.now() - started) / 1000, measured);
        if (kind === 'dead') instruments?.dead.add(1, { ...attributes, [ATTR.table]: table });
        if (span === undefined) return;
        span.setAttributes(measured);
        if (errorType !== undefined) span.setStatus({ code: SPAN_STATUS_ERROR, message: errorType });
        span.end();
      };
      const running = span === undefined ? run() : withSpan(activeContext(), span, run);
      return running.then(
        (result) => {
          finish(result.kind);
          return result;
        },
        (error: unknown) => {
          finish('unrecorded');
          throw error;
        },
      );
    },
    wentDead(action) {
      currentInstruments()?.dead.add(1, { ...base, [ATTR.destination]: action, [ATTR.table]: table });
    },
  };
}
