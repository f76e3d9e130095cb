import type { Context, ContextManager, Meter, MeterProvider, Span, Tracer, TracerProvider } from '@opentelemetry/api';

/**
 * What an application's OpenTelemetry SDK registered, read straight from where `@opentelemetry/api`
 * 1.x keeps it: an object on `globalThis` under `Symbol.for('opentelemetry.js.api.1')`
 * (api/src/internal/global-utils.ts), `{ version, trace, metrics, context, propagation, diag }`,
 * filled by `trace.setGlobalTracerProvider`, `metrics.setGlobalMeterProvider` and
 * `context.setGlobalContextManager` (NodeSDK.start() and provider.register() call them). The key
 * is per major version precisely so that every copy of the API in a process shares it.
 *
 * Why not `import '@opentelemetry/api'`: it is an optional peer. A static import fails for every
 * application that has not installed it, and a dynamic `import()` is asynchronous (the first
 * deliveries would go unobserved) and breaks bundlers (esbuild, webpack) that cannot resolve it.
 * Reading the global costs one property lookup when no SDK is registered, needs no dependency, and
 * sees an SDK registered after this module loaded. The shapes used here (getTracer, startSpan,
 * getMeter, the instruments, active/with, the span context key) are the stable 1.x interfaces.
 */
const API_KEY = Symbol.for('opentelemetry.js.api.1');

/** The context key of the active span (api/src/trace/context-utils.ts: `createContextKey` is `Symbol.for`). */
const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');

/** The instrumentation scope: what `otel.scope.name` says on every span and metric. */
export const SCOPE_NAME = 'rack-webhooks';

interface RegisteredApi {
  readonly version?: unknown;
  readonly trace?: TracerProvider;
  readonly metrics?: MeterProvider;
  readonly context?: ContextManager;
}

function registered(): RegisteredApi | undefined {
  const api = (globalThis as Record<symbol, unknown>)[API_KEY];
  return typeof api === 'object' && api !== null ? (api as RegisteredApi) : undefined;
}

function usable<T>(value: T | undefined, method: string): T | undefined {
  return typeof (value as Record<string, unknown> | undefined)?.[method] === 'function' ? value : undefined;
}

// One tracer and one meter per registered provider: a test or an app that swaps its provider gets
// fresh ones; the common case is one comparison per delivery.
let tracerOf: { provider: TracerProvider; tracer: Tracer } | undefined;
let meterOf: { provider: MeterProvider; meter: Meter } | undefined;

/** The registered SDK's tracer for this package, or undefined when none is registered. */
export function currentTracer(): Tracer | undefined {
  const provider = usable(registered()?.trace, 'getTracer');
  if (provider === undefined) return undefined;
  if (tracerOf?.provider !== provider) tracerOf = { provider, tracer: provider.getTracer(SCOPE_NAME) };
  return tracerOf.tracer;
}

/** The registered SDK's meter for this package, or undefined when none is registered. */
export function currentMeter(): Meter | undefined {
  const provider = usable(registered()?.metrics, 'getMeter');
  if (provider === undefined) return undefined;
  if (meterOf?.provider !== provider) meterOf = { provider, meter: provider.getMeter(SCOPE_NAME) };
  return meterOf.meter;
}

function contextManager(): ContextManager | undefined {
  return usable(registered()?.context, 'active');
}

/** The active context (the HTTP server span's, say), or undefined without a context manager. */
export function activeContext(): Context | undefined {
  return contextManager()?.active();
}

/** The span active in `context` (or in the active context). */
export function activeSpan(context: Context | undefined = activeContext()): Span | undefined {
  const span = context?.getValue(SPAN_KEY) as Span | undefined;
  return typeof span?.spanContext === 'function' ? span : undefined;
}

/**
 * Runs `fn` with `span` active (so that what the handlers do, a database query traced by its own
 * instrumentation, is its child), on top of `parent`. Without a context manager it just runs `fn`.
 */
export function withSpan<T>(parent: Context | undefined, span: Span, fn: () => T): T {
  const manager = contextManager();
  const base = parent ?? manager?.active();
  if (manager === undefined || base === undefined) return fn();
  return manager.with(base.setValue(SPAN_KEY, span), fn);
}

/**
 * Runs `fn` in `context`, captured earlier (inside a span, say), so that what it does is that
 * span's child even when it is called from elsewhere. Without one, or a context manager, just runs `fn`.
 */
export function withContext<T>(context: Context | undefined, fn: () => T): T {
  const manager = contextManager();
  if (manager === undefined || context === undefined) return fn();
  return manager.with(context, fn);
}
