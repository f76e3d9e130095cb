import { defineConfig } from 'tsup';

/**
 * One entry per public subpath (see package.json "exports"). The core is built for a neutral
 * platform: a `node:` import sneaking into it fails the build instead of a Worker at run time.
 */
export const entries = {
  index: 'src/index.ts',
  redis: 'src/redis.ts',
} as const;

export default defineConfig({
  entry: entries,
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'neutral',
  // Shared chunks for CJS too, so `instanceof WebhookDedupError` holds across subpaths.
  splitting: true,
  treeshake: true,
  // Whitespace and syntax only: identifiers stay readable in stack traces, and the precompiled
  // validators (most of the bytes) shrink by half. Source maps ship alongside.
  minifyWhitespace: true,
  minifySyntax: true,
  minifyIdentifiers: false,
});
