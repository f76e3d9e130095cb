// The bundles a user ships, measured from the BUILT package (dist/, via package.json "exports" and
// "sideEffects") by esbuild as a user bundles them (minified ESM, platform neutral, as wrangler
// does). Shared by check-size.mjs (the limits) and docs-figures.mjs (the figures the docs quote).
import { build } from 'esbuild';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { root, tmp } from './lib.mjs';

export const KB = 1000; // the limits are in kB of 1,000 bytes: the stricter reading of "40 KB"

export const bundles = [
  {
    label: 'createReceiver + createFetchHandler',
    docLabel: 'a Worker with `createReceiver` and `createFetchHandler`',
    limit: 40 * KB,
    source: `import { createReceiver } from 'rack-webhooks';
import { createFetchHandler } from 'rack-webhooks/web';
export default { fetch: createFetchHandler(createReceiver({ secrets: globalThis.SECRET })) };`,
  },
  {
    label: 'verify',
    docLabel: '`verify` alone',
    limit: 20 * KB,
    source: `import { verify } from 'rack-webhooks';
export default { async fetch(request) { await verify(await request.text(), request.headers.get('service-signature'), { secrets: globalThis.SECRET }); return new Response('ok'); } };`,
  },
  {
    // No limit: the validators are the price of validating. Run below, to prove that the bare
    // import is kept (package.json lists dist/validate.* under "sideEffects").
    label: "the receiver + import 'rack-webhooks/validate'",
    docLabel: "a Worker with the receiver and `import 'rack-webhooks/validate'` (`validate: true`)",
    limit: undefined,
    source: `import { createReceiver, signSync } from 'rack-webhooks';
import { createFetchHandler } from 'rack-webhooks/web';
import 'rack-webhooks/validate';
export const fetch = createFetchHandler(createReceiver({ secrets: 'k', validate: true }));
export { signSync };`,
  },
];

/**
 * Each bundle built: { ...bundle, bytes, gzip, code, warnings }, in a scratch project that depends
 * on the package the way `npm link` does (a symlink to this one). Returns the project directory too.
 */
export async function measureBundles() {
  const project = join(tmp, 'size');
  rmSync(project, { recursive: true, force: true });
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  symlinkSync(root, join(project, 'node_modules', 'rack-webhooks'), 'dir');
  const results = [];
  for (const [index, bundle] of bundles.entries()) {
    const entry = join(project, `entry-${index}.mjs`);
    writeFileSync(entry, bundle.source);
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'neutral',
      write: false,
      logLevel: 'silent',
      absWorkingDir: project,
    });
    const code = result.outputFiles[0].contents;
    results.push({ ...bundle, bytes: code.length, gzip: gzipSync(code, { level: 9 }).length, code, warnings: result.warnings });
  }
  return { project, results };
}
