// `npm test`: everything that gates a change, in the order a failure is cheapest to read.
// In CI (CI=true) nothing may be skipped: a step that cannot run fails the run.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { run, tmp } from './lib.mjs';

const steps = [
  ['generated code matches schemas/ (npm run generate --check)', () => run('node', ['scripts/generate.mjs', '--check'])],
  ['typecheck', () => run('npx', ['tsc', '--noEmit', '-p', 'tsconfig.json'])],
  [
    'lint (eslint, typescript-eslint) and format (prettier --check)',
    () => {
      run('npx', ['eslint', '--max-warnings', '0', '.']);
      run('npx', ['prettier', '--check', '--log-level', 'warn', '.']);
    },
  ],
  // Built before the tests: the examples import the package by its published name.
  ['build (tsup)', () => run('npm', ['run', '--silent', 'build', '--', '--silent'])],
  ['core and fetch adapter import no node: module', () => run('node', ['scripts/check-runtime-neutral.mjs'])],
  [
    'bundle sizes: the receiver at most 40 kB, verify at most 20 kB (esbuild, minified, from dist)',
    () => run('node', ['scripts/check-size.mjs']),
  ],
  ['the sizes docs/ quotes are current (npm run docs:figures --check)', () => run('node', ['scripts/docs-figures.mjs', '--check'])],
  [
    'the TypeScript snippets of README.md and docs/*.md compile against the built package',
    () => run('node', ['scripts/check-readme-snippets.mjs']),
  ],
  ['API reference (TypeDoc, warnings as errors; @example blocks compiled)', () => run('node', ['scripts/docs.mjs'])],
  [
    'unit, property, type, adapter and example tests (vitest, with coverage)',
    () =>
      run('npx', ['vitest', 'run', '--coverage', '--reporter=default', '--reporter=json', `--outputFile.json=${join(tmp, 'vitest.json')}`]),
  ],
  [
    'package (optional peer ranges tested, publint --strict, attw --pack, consumer types on TS 5.0/5.9/7)',
    () => run('node', ['scripts/check-package.mjs']),
  ],
  ['built package on Node 20, 22 and 24 (ESM and CJS)', () => run('node', ['scripts/smoke-runtimes.mjs'])],
  ['built package on Bun, Deno and the Web Crypto path', () => run('node', ['scripts/smoke-edge-runtimes.mjs'])],
];

rmSync(join(tmp, 'vitest.json'), { force: true });
for (const [index, [label, step]] of steps.entries()) {
  console.log(`\n==> [${index + 1}/${steps.length}] ${label}`);
  step();
}

const reportPath = join(tmp, 'vitest.json');
if (!existsSync(reportPath)) throw new Error('vitest wrote no report');
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
if (report.numTotalTests === 0) throw new Error('vitest ran no test');
if (process.env.CI && (report.numPendingTests > 0 || report.numTodoTests > 0)) {
  throw new Error(`${report.numPendingTests + report.numTodoTests} test(s) were skipped; CI allows none`);
}
console.log(`\nAll ${steps.length} steps passed.`);
console.log(`${report.numPassedTests} passed, ${report.numFailedTests} failed`);
