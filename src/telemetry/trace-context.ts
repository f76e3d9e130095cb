import type { SpanContext } from '@opentelemetry/api';
import { activeSpan } from './otel-api.js';

/**
 * The receiving span's context, kept with the stored delivery so that the worker's `process` span
 * can link to it: as a W3C `traceparent` (version 00), the format every tracing system reads. The
 * trace state is not kept (vendor data, unbounded); the link needs only the ids and the flags.
 */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const INVALID_TRACE = '0'.repeat(32);
const INVALID_SPAN = '0'.repeat(16);

export function formatTraceparent(context: SpanContext): string | undefined {
  const { traceId, spanId, traceFlags } = context;
  if (!/^[0-9a-f]{32}$/.test(traceId) || !/^[0-9a-f]{16}$/.test(spanId) || traceId === INVALID_TRACE || spanId === INVALID_SPAN)
    return undefined;
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The stored text back to a span context (remote); undefined for NULL or anything malformed. */
export function parseTraceparent(text: unknown): SpanContext | undefined {
  if (typeof text !== 'string') return undefined;
  const match = TRACEPARENT.exec(text);
  if (match === null || match[1] === INVALID_TRACE || match[2] === INVALID_SPAN) return undefined;
  return { traceId: match[1]!, spanId: match[2]!, traceFlags: parseInt(match[3]!, 16), isRemote: true };
}

/** The active span's `traceparent`: the receive span's while a receiver stores a delivery. */
export function activeTraceparent(): string | undefined {
  const span = activeSpan();
  return span === undefined ? undefined : formatTraceparent(span.spanContext());
}
