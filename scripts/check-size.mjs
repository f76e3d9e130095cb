// What a Worker ships: the BUILT package bundled by esbuild as a user bundles it (bundle-sizes.mjs).
// Fails when a bundle passes its limit, when esbuild warns (a bare chunk import it has to drop,
// say), when `import 'rack-webhooks/validate'` does not survive bundling, or when the root entry
// is more than two files for Node to load.
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { KB, measureBundles } from './bundle-sizes.mjs';
import { root } from './lib.mjs';

const problems = [];
const { project, results } = await measureBundles();
for (const bundle of results) {
  for (const warning of bundle.warnings) problems.push(`${bundle.label}: esbuild warns: ${warning.text}`);
  if (bundle.limit !== undefined && bundle.bytes > bundle.limit) {
    problems.push(`${bundle.label}: ${bundle.bytes} bytes minified, over the limit of ${bundle.limit}`);
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
