import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * Off Node (a Worker without nodejs_compat: no `process.getBuiltinModule`), `@opentelemetry/api`
 * cannot be loaded, and every helper of src/telemetry/otel-api.ts must answer "nothing to observe"
 * or run what it is given unchanged. A fresh copy of the module is loaded with the builtin hidden,
 * since the module remembers its first answer. (Without the package on Node: without-api.test.ts.)
 */
async function loadWithoutBuiltins() {
  vi.resetModules();
  vi.stubGlobal('process', { ...process, getBuiltinModule: undefined });
  return import('../../src/telemetry/otel-api.js');
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.resetModules();
});

describe('otel-api where @opentelemetry/api cannot be loaded', () => {
  it('finds no API, tracer, meter, context or span, and runs callbacks as they are', async () => {
    const otel = await loadWithoutBuiltins();
    expect(otel.openTelemetryApi()).toBeUndefined();
    expect(otel.openTelemetryApi()).toBeUndefined(); // tried once, remembered
    expect(otel.currentTracer()).toBeUndefined();
    expect(otel.currentMeter()).toBeUndefined();
    expect(otel.activeContext()).toBeUndefined();
    expect(otel.activeSpan()).toBeUndefined();
    expect(otel.withSpan(undefined, {} as never, () => 'ran')).toBe('ran');
    expect(otel.withContext({} as never, () => 'ran too')).toBe('ran too');
  });

  it('with the API loaded but no SDK registered: no tracer and no meter (the API no-ops record nothing)', async () => {
    vi.resetModules();
    const otel = await import('../../src/telemetry/otel-api.js');
    expect(otel.openTelemetryApi()).toBeDefined();
    expect(otel.currentTracer()).toBeUndefined();
    expect(otel.currentMeter()).toBeUndefined();
    expect(otel.withContext(undefined, () => 'ran')).toBe('ran');
  });
});
