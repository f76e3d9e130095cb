// What a Worker ships: the BUILT package (dist/, via package.json "exports" and "sideEffects")
// bundled by esbuild as a user bundles it (minified ESM, platform neutral, as wrangler does).
// Fails when a bundle passes its limit, when esbuild warns (a bare chunk import it has to drop,
// say), when `import 'rack-webhooks/validate'` does not survive bundling, or when the root entry
// is more than two files for Node to load.
import { build } from 'esbuild';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { root, tmp } from './lib.mjs';

const KB = 1000; // the limits are in kB of 1,000 bytes: the stricter reading of "40 KB"

const bundles = [
  {
    label: 'createReceiver + createFetchHandler',
    limit: 40 * KB,
    source: `import { createReceiver } from 'rack-webhooks';
import { createFetchHandler } from 'rack-webhooks/web';
export default { fetch: createFetchHandler(createReceiver({ secrets: globalThis.SECRET })) };`,
  },
  {
    label: 'verify',
    limit: 20 * KB,
    source: `import { verify } from 'rack-webhooks';
export default { async fetch(request) { await verify(await request.text(), request.headers.get('service-signature'), { secrets: globalThis.SECRET }); return new Response('ok'); } };`,
  },
  {
    // No limit: the validators are the price of validating. Run below, to prove that the bare
    // import is kept (package.json lists dist/validate.* under "sideEffects").
    label: "the receiver + import 'rack-webhooks/validate'",
    limit: undefined,
    source: `import { createReceiver, signSync } from 'rack-webhooks';
import { createFetchHandler } from 'rack-webhooks/web';
import 'rack-webhooks/validate';
export const fetch = createFetchHandler(createReceiver({ secrets: 'k', validate: true }));
export { signSync };`,
  },
];

// A scratch project that depends on the package the way `npm link` does: a symlink to this one.
const project = join(tmp, 'size');
rmSync(project, { recursive: true, force: true });
mkdirSync(join(project, 'node_modules'), { recursive: true });
symlinkSync(root, join(project, 'node_modules', 'rack-webhooks'), 'dir');

const problems = [];
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
  for (const warning of result.warnings) problems.push(`${bundle.label}: esbuild warns: ${warning.text}`);
  const code = result.outputFiles[0].contents;
  const gzip = gzipSync(code, { level: 9 }).length;
  results.push({ ...bundle, bytes: code.length, gzip, code });
  if (bundle.limit !== undefined && code.length > bundle.limit) {
    problems.push(`${bundle.label}: ${code.length} bytes minified, over the limit of ${bundle.limit}`);
  }
}

const kb = (bytes) => `${(bytes / KB).toFixed(1)} kB`;
console.log('size: esbuild bundle of the built package (minified ESM)     minified      gzip     limit');
for (const { label, bytes, gzip, limit } of results) {
  const verdict = limit === undefined ? '' : bytes <= limit ? '  ok' : '  OVER';
  console.log(
    `size: ${label.padEnd(52)} ${kb(bytes).padStart(9)} ${kb(gzip).padStart(9)} ${(limit === undefined ? '-' : kb(limit)).padStart(9)}${verdict}`,
  );
}

// Node loads each file of the root entry with a round trip of its ESM loader on every cold start:
// the core is kept in one chunk (tsup.config.ts), so that `import 'rack-webhooks'` is two files.
const MAX_ROOT_FILES = 2;
const { metafile } = await build({
  entryPoints: [join(root, 'dist/index.js')],
  bundle: true,
  write: false,
  metafile: true,
  format: 'esm',
  platform: 'neutral',
  logLevel: 'silent',
});
const rootFiles = Object.keys(metafile.inputs);
console.log(
  `size: import 'rack-webhooks' loads ${rootFiles.length} files on Node (at most ${MAX_ROOT_FILES}): ${rootFiles.map((f) => f.replace(/^.*dist\//, '')).join(', ')}`,
);
if (rootFiles.length > MAX_ROOT_FILES)
  problems.push(
    `import 'rack-webhooks' loads ${rootFiles.length} files, more than ${MAX_ROOT_FILES}: the core is split over several chunks again`,
  );

// The validating bundle must validate: a schema violation is a 400 invalid_event, not a TypeError
// from createReceiver (which is what a dropped `import 'rack-webhooks/validate'` would cause).
const validating = results[2];
const file = join(project, 'validating.bundle.mjs');
writeFileSync(file, validating.code);
let answer;
try {
  const { fetch, signSync } = await import(pathToFileURL(file).href);
  const invalid = JSON.stringify({
    action: 'app:create',
    status: 'success',
    timestamp: '2026-04-27T10:30:00Z',
    data: { rack: '', actor: 'ops@example.com' },
  });
  const response = await fetch(
    new Request('http://localhost/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-signature': signSync(invalid, { secrets: 'k' }) },
      body: invalid,
    }),
  );
  answer = `${response.status} ${await response.text()}`;
} catch (error) {
  answer = `${error.name}: ${error.message}`;
}
if (answer !== '400 {"error":"invalid_event"}') problems.push(`${validating.label}: an invalid event got ${answer}, not 400 invalid_event`);
else console.log(`size: ${validating.label} validates once bundled (400 invalid_event)`);

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
