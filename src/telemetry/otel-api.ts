import type * as OpenTelemetryApi from '@opentelemetry/api';
import type { Context, Meter, MeterProvider, Span, Tracer, TracerProvider } from '@opentelemetry/api';

/**
 * `@opentelemetry/api`, the public API an application's SDK registers with, loaded on first use
 * with a synchronous `require` (`process.getBuiltinModule('node:module').createRequire`): it is
 * an optional peer, so a static import would fail every application that has not installed it,
 * and a dynamic `import()` is asynchronous (the first deliveries would go unobserved). Without
 * the package, or off Node (no `getBuiltinModule`), there is nothing to observe with: every
 * function here answers undefined, or runs what it is given as it is.
 */
type Api = typeof OpenTelemetryApi;

interface ModuleBuiltin {
  createRequire(path: string): (id: string) => unknown;
}

/** Where to resolve the package from: this file (ESM or CJS build), else the working directory. */
function resolveFrom(): string {
  if (typeof __filename === 'string') return __filename;
  const url = (import.meta as { url?: unknown }).url;
  return typeof url === 'string' ? url : `${globalThis.process?.cwd?.() ?? '.'}/`;
}

let loaded: Api | null | undefined;

/** The API, or undefined when it is not installed (tried once). */
export function openTelemetryApi(): Api | undefined {
  if (loaded === undefined) {
    loaded = null;
    try {
      const builtin = globalThis.process?.getBuiltinModule?.('node:module') as ModuleBuiltin | undefined;
      const api = builtin?.createRequire(resolveFrom())('@opentelemetry/api') as Api | undefined;
      if (typeof api?.trace?.getTracerProvider === 'function') loaded = api;
    } catch {
      // Not installed: nothing registered it, so there is nothing to emit.
    }
  }
  return loaded ?? undefined;
}

/** The instrumentation scope: what `otel.scope.name` says on every span and metric. */
export const SCOPE_NAME = 'rack-webhooks';

// One tracer and one meter per registered provider: a test or an app that swaps its provider gets
// fresh ones; the common case is one comparison per delivery.
let tracerOf: { provider: TracerProvider; tracer: Tracer } | undefined;
let meterOf: { provider: MeterProvider; meter: Meter | undefined } | undefined;
/** The API's own no-op tracer provider: what the global proxy delegates to while no SDK is registered. */
let noopTracerProvider: TracerProvider | undefined;

/** The registered SDK's tracer for this package, or undefined when none is registered. */
export function currentTracer(): Tracer | undefined {
  const api = openTelemetryApi();
  if (api === undefined) return undefined;
  noopTracerProvider ??= new api.ProxyTracerProvider().getDelegate();
  // The global is the API's proxy (its `getDelegate()` is what an SDK registered), possibly another copy's.
  const global = api.trace.getTracerProvider() as TracerProvider & { getDelegate?: () => TracerProvider };
  const provider = typeof global.getDelegate === 'function' ? global.getDelegate() : global;
  if (provider === noopTracerProvider) return undefined;
  if (tracerOf?.provider !== provider) tracerOf = { provider, tracer: provider.getTracer(SCOPE_NAME) };
  return tracerOf.tracer;
}

/** The registered SDK's meter for this package, or undefined when none is registered. */
export function currentMeter(): Meter | undefined {
  const api = openTelemetryApi();
  if (api === undefined) return undefined;
  const provider = api.metrics.getMeterProvider();
  if (meterOf?.provider !== provider) {
    const meter = provider.getMeter(SCOPE_NAME);
    // The API's no-op meter while no SDK is registered: nothing to record into.
    meterOf = { provider, meter: meter === api.createNoopMeter() ? undefined : meter };
  }
  return meterOf.meter;
}

/** The active context (the HTTP server span's, say), or undefined without the API. */
export function activeContext(): Context | undefined {
  return openTelemetryApi()?.context.active();
}

/** The span active in `context` (or in the active context). */
export function activeSpan(context: Context | undefined = activeContext()): Span | undefined {
  return context === undefined ? undefined : openTelemetryApi()?.trace.getSpan(context);
}

/**
 * Runs `fn` with `span` active (so that what the handlers do, a database query traced by its own
 * instrumentation, is its child), on top of `parent`. Without a context manager it just runs `fn`.
 */
export function withSpan<T>(parent: Context | undefined, span: Span, fn: () => T): T {
  const api = openTelemetryApi();
  if (api === undefined) return fn();
  return api.context.with(api.trace.setSpan(parent ?? api.context.active(), span), fn);
}

/**
 * Runs `fn` in `context`, captured earlier (inside a span, say), so that what it does is that
 * span's child even when it is called from elsewhere. Without one, just runs `fn`.
 */
export function withContext<T>(context: Context | undefined, fn: () => T): T {
  const api = openTelemetryApi();
  if (api === undefined || context === undefined) return fn();
  return api.context.with(context, fn);
}
