import { defineConfig } from 'tsup';

/**
 * One entry per public subpath (see package.json "exports"). The core is built for a neutral
 * platform: a `node:` import sneaking into it fails the build instead of a Worker at run time.
 */
export const entries = {
  index: 'src/index.ts',
  redis: 'src/redis.ts',
  inbox: 'src/inbox.ts',
  node: 'src/adapters/node.ts',
  express: 'src/adapters/express.ts',
  fastify: 'src/adapters/fastify.ts',
  web: 'src/adapters/web.ts',
  testing: 'src/testing/index.ts',
} as const;

const library = defineConfig({
  entry: entries,
  format: ['esm', 'cjs'],
  dts: true,
  clean: false, // the build script empties dist/ once: the two configs below build concurrently
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
  external: ['fastify'],
});

/** The command-line tool: one ESM file for Node, with a shebang; it shares no chunks with the library. */
const cli = defineConfig({
  entry: { cli: 'src/cli/main.ts' },
  format: ['esm'],
  dts: false,
  clean: false,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  splitting: false,
  minifyWhitespace: true,
  minifySyntax: true,
  banner: { js: '#!/usr/bin/env node' },
});

/**
 * The console's page (src/console/app): one ES module and its stylesheet for the browser, served by
 * `rack-webhooks console` from dist/console. Nothing external: the page loads only these two files.
 */
const consolePage = defineConfig({
  entry: { console: 'src/console/app/main.ts' },
  outDir: 'dist/console',
  format: ['esm'],
  dts: false,
  clean: false,
  sourcemap: false,
  target: 'es2020',
  platform: 'browser',
  splitting: false,
  minify: true,
  outExtension: () => ({ js: '.js' }),
});

export default [library, cli, consolePage];
