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

/**
 * How one attempt of the worker ended, in both modes, once its outcome is recorded (or its record
 * failed): the loop reads it (a retry's wake-up), this file measures it, the runner logs it.
 * - `succeeded`: marked done (the default mode: in the handlers' own transaction, with their writes);
 * - `failed`: pending again in `retryInMs`;
 * - `dead`: no attempts left, or the stored body no longer parses;
 * - `lease-lost`: nothing recorded: the lease ran out and another worker has the delivery;
 * - `unrecorded`: the record failed (the database went away), or the worker stopped past its
 *   `timeoutMs`: the row stays running and recovery counts the attempt as crashed when its lease runs out.
 */
export type Outcome =
  | { readonly kind: 'succeeded' }
  | { readonly kind: 'failed'; readonly retryInMs: number }
  | { readonly kind: 'dead' }
  | { readonly kind: 'lease-lost' }
  | { readonly kind: 'unrecorded' };

/** `rack_webhooks.outcome` of a `process` span, and `error.type` when it failed. */
const OUTCOMES: Record<Outcome['kind'], readonly [outcome: string, errorType: string | undefined]> = {
  succeeded: ['done', undefined],
  failed: ['retry', 'handler_failed'],
  dead: ['dead', 'handler_failed'],
  'lease-lost': ['lease_lost', 'lease_lost'],
  unrecorded: ['unrecorded', 'inbox_unavailable'],
};

export interface WorkerTelemetry {
  /** Runs one attempt inside its `process` span (the handlers' own spans are its children). */
  attempt(facts: AttemptFacts, run: () => Promise<Outcome>): Promise<Outcome>;
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
      const finish = (kind: Outcome['kind']) => {
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
