import { context, metrics, trace, type Attributes, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  PeriodicExportingMetricReader,
  type DataPoint,
  type MetricData,
  type MetricReader,
} from '@opentelemetry/sdk-metrics';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { onTestFinished } from 'vitest';

/**
 * The real OpenTelemetry SDK, registered globally the way an application's instrumentation file
 * does (NodeSDK.start() makes the same three calls), with in-memory exporters to read back what
 * the package emitted. Unregistered when the test finishes.
 */
export interface TestSdk {
  /** Every span ended so far. */
  spans(): ReadableSpan[];
  /** A collection now: every metric by name. */
  collect(): Promise<Map<string, MetricData>>;
  /** Runs `fn` inside an active SERVER span, as HTTP instrumentation would around a request. */
  inServerSpan<T>(fn: () => T): { span: Span; result: T };
}

export function registerSdk(options: { traces?: boolean; metrics?: boolean; readers?: MetricReader[] } = {}): TestSdk {
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader, ...(options.readers ?? [])] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  if (options.traces ?? true) trace.setGlobalTracerProvider(tracerProvider);
  if (options.metrics ?? true) metrics.setGlobalMeterProvider(meterProvider);
  onTestFinished(async () => {
    trace.disable();
    metrics.disable();
    context.disable();
    await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
  });
  const testTracer = tracerProvider.getTracer('test-http');
  return {
    spans: () => spanExporter.getFinishedSpans(),
    async collect() {
      metricExporter.reset();
      await reader.forceFlush();
      const byName = new Map<string, MetricData>();
      for (const resource of metricExporter.getMetrics())
        for (const scope of resource.scopeMetrics) for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
      return byName;
    },
    inServerSpan(fn) {
      const span = testTracer.startSpan('POST /webhooks', { kind: 1 /* SERVER */ });
      const result = context.with(trace.setSpan(context.active(), span), fn);
      return { span, result };
    },
  };
}

/** The data points of a metric whose attributes include `match`. */
export function points(metric: MetricData | undefined, match: Attributes = {}): DataPoint<unknown>[] {
  if (metric === undefined) return [];
  return (metric.dataPoints as DataPoint<unknown>[]).filter((point) =>
    Object.entries(match).every(([key, value]) => point.attributes[key] === value),
  );
}

/** The sum of a counter's (or the count of a histogram's) points whose attributes include `match`. */
export function total(metric: MetricData | undefined, match: Attributes = {}): number {
  return points(metric, match).reduce((sum, point) => {
    const value = point.value as number | { count: number };
    return sum + (typeof value === 'number' ? value : value.count);
  }, 0);
}

/** Everything a span says, as one string: to assert that no secret, signature or body is in it. */
export function everythingSaid(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((span) => ({ name: span.name, attributes: span.attributes, status: span.status, events: span.events, links: span.links })),
  );
}
