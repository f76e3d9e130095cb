// `npm run test:package`: the packed package against the matrix its users run, which downloads
// TypeScript 5.0 and 7 and Node 22 and 24 and takes minutes, so a plain `npm test` leaves it to
// .ci/run. Run it after `npm test` (or at least `npm run build`): it packs dist/ as it stands.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { root, run } from './lib.mjs';

const steps = [
  [
    'package (optional peer ranges tested, publint --strict, attw --pack, consumer types on TS 5.0/5.9/7)',
    () => run('node', ['scripts/check-package.mjs']),
  ],
  ['built package on Node 20, 22 and 24 (ESM and CJS)', () => run('node', ['scripts/smoke-runtimes.mjs'])],
  ['built package on Bun, Deno and the Web Crypto path', () => run('node', ['scripts/smoke-edge-runtimes.mjs'])],
];

if (!existsSync(join(root, 'dist', 'index.js'))) throw new Error('dist/ is empty: run npm test or npm run build first');
const started = Date.now();
for (const [index, [label, step]] of steps.entries()) {
  console.log(`\n==> [package ${index + 1}/${steps.length}] ${label}`);
  step();
}
console.log(`\nAll ${steps.length} package steps passed in ${Math.round((Date.now() - started) / 1000)} s.`);
