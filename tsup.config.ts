import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Plugin } from 'esbuild';
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
  validate: 'src/validate.ts',
} as const;

/**
 * The core (everything src/index.ts reaches) in ONE chunk. esbuild puts each module in the chunk
 * of the set of entries that reach it, so on its own it splits the core over seven chunks (one
 * per combination: shared with /redis, with /inbox, with the adapters...), and
 * `import 'rack-webhooks'` loads eight files, each a round trip for Node's ESM loader on every
 * cold start (1.6x the import time of @octokit/webhooks-methods; bench/cold-import.mjs). This plugin makes every entry
 * reach the whole core through a tiny virtual module (`export * from 'src/index.ts'`, imported
 * for its "side effects" only, so that it binds nothing and adds no byte), so the core is one
 * chunk that every entry shares: the root entry is two files, and classes and the validator
 * registry still have one copy across subpaths. Bundlers still tree-shake it statement by
 * statement (scripts/check-size.mjs).
 */
const CORE_HUB = 'rack-webhooks-build:core';
function oneCoreChunk(entryFiles: readonly string[]): Plugin {
  const entryPaths = new Set(entryFiles.map((file) => resolve(file)));
  const core = resolve(entries.index);
  return {
    name: 'one-core-chunk',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) =>
        entryPaths.has(args.path) ? { contents: `${await readFile(args.path, 'utf8')}\nimport '${CORE_HUB}';\n`, loader: 'ts' } : undefined,
      );
      // sideEffects: true keeps the bare import (package.json would have esbuild ignore it, with a warning).
      build.onResolve({ filter: new RegExp(`^${CORE_HUB}$`) }, () => ({ path: 'core', namespace: 'one-core-chunk', sideEffects: true }));
      build.onLoad({ filter: /.*/, namespace: 'one-core-chunk' }, () => ({
        contents: `export * from ${JSON.stringify(core)};`,
        loader: 'js',
        resolveDir: dirname(core),
      }));
    },
  };
}

const library = defineConfig({
  entry: entries,
  format: ['esm', 'cjs'],
  dts: true,
  clean: false, // the build script empties dist/ once: the two configs below build concurrently
  sourcemap: false,
  target: 'es2022',
  platform: 'neutral',
  // Shared chunks for CJS too, so `instanceof WebhookDedupError` holds across subpaths.
  splitting: true,
  // esbuild makes an entry import every chunk holding a module it reaches, even when it needs no
  // binding from it (`import './chunk-X.js'`): a bare import that bundlers warn about and drop,
  // since the package is "sideEffects": false. The chunk is still loaded through the import that
  // uses it, so rollup (tsup's tree-shaking pass, which sees other chunks as external) may drop it.
  treeshake: { moduleSideEffects: 'no-external' },
  // Readable JavaScript, no source maps. Minified, an uncaught error printed a 13 KB line of the
  // bundle ahead of the one useful line, and esbuild's whitespace minifier dropped the
  // `/* @__PURE__ */` marks that let a user's bundler drop unused tables (1.2 kB of src/state in a
  // Worker). Users' bundlers minify anyway (the size bars measure that), and readable files with
  // their own names and lines make source maps (2.5 MB of the tarball) unnecessary.
  external: ['fastify'],
  esbuildPlugins: [oneCoreChunk(Object.values(entries))],
});

/** The command-line tool: one ESM file for Node, with a shebang; it shares no chunks with the library. */
const cli = defineConfig({
  entry: { cli: 'src/cli/main.ts' },
  format: ['esm'],
  dts: false,
  clean: false,
  sourcemap: false,
  target: 'node20',
  platform: 'node',
  splitting: false,
  // Readable for the same reason as the library: a stack trace's first lines are the useful ones.
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

// scripts/test.mjs builds in two passes, the same files as one: RACK_WEBHOOKS_BUILD=js first (what
// the tests run, in seconds), then =types (the library's declarations, most of the build's CPU) beside the tests.
const pass = process.env['RACK_WEBHOOKS_BUILD'];
export default pass === 'js'
  ? [{ ...library, dts: false }, cli, consolePage]
  : pass === 'types'
    ? [{ ...library, dts: { only: true } }]
    : [library, cli, consolePage];
