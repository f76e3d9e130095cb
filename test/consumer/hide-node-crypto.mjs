// Node without process.getBuiltinModule: the SDK must fall back to Web Crypto, as on Workers.
delete process.getBuiltinModule;
await import('./smoke-edge.mjs');
