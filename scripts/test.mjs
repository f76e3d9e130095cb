// `npm test`: everything that gates a change, in the order a failure is cheapest to read.
// In CI (CI=true) nothing may be skipped: a step that cannot run fails the run.
// The package matrix (TypeScript 5.0 and 7, Node 22 and 24, Bun, Deno) is `npm run test:package`,
// which .ci/run runs after this.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { root, run, runLanes, tmp } from './lib.mjs';

// The same default and variable as test/kit/slices.ts, which leaves the browser slice out without it.
const chromium = process.env.RACK_WEBHOOKS_CHROMIUM ?? '/usr/bin/chromium';
const browserSkipped = !process.env.CI && !existsSync(chromium);
const reportPath = join(tmp, 'vitest.json');

// Steps whose commands only read the tree run side by side, one lane a core: tsc and eslint take
// most of the time before the tests and each uses one core. A lane's output prints when it ends.
const steps = [
  [
    'generated code matches schemas/, typecheck, lint (eslint, typescript-eslint) and format (prettier --check)',
    () =>
      runLanes([
        { label: 'typecheck (tsc --noEmit)', commands: [['npx', ['tsc', '--noEmit', '-p', 'tsconfig.json']]] },
        { label: 'lint (eslint --max-warnings 0)', commands: [['npx', ['eslint', '--max-warnings', '0', '.']]] },
        {
          label: 'generated code matches schemas/ (npm run generate --check); format (prettier --check)',
          commands: [
            ['node', ['scripts/generate.mjs', '--check']],
            ['npx', ['prettier', '--check', '--log-level', 'warn', '.']],
          ],
        },
      ]),
  ],
  // Built before the tests: the examples import the package by its published name.
  ['build (tsup)', () => run('npm', ['run', '--silent', 'build', '--', '--silent'])],
  [
    'the built package: no node: module in the core, bundle sizes, the figures docs/ quotes, README and docs snippets, API reference',
    () =>
      runLanes([
        // Both measure bundles in .tmp/size: one after the other.
        {
          label:
            'core and fetch adapter import no node: module; bundle sizes (receiver at most 40 kB, verify 20 kB); docs/ figures current',
          commands: [
            ['node', ['scripts/check-runtime-neutral.mjs']],
            ['node', ['scripts/check-size.mjs']],
            ['node', ['scripts/docs-figures.mjs', '--check']],
          ],
        },
        {
          label: 'the TypeScript snippets of README.md and docs/*.md compile against the built package',
          commands: [['node', ['scripts/check-readme-snippets.mjs']]],
        },
        {
          label: 'API reference (TypeDoc, warnings as errors; @example blocks compiled)',
          commands: [['node', ['scripts/docs.mjs']]],
        },
      ]),
  ],
  [
    'unit, database and browser tests (vitest projects, with coverage)',
    () => run('npx', ['vitest', 'run', '--coverage', '--reporter=default', '--reporter=json', `--outputFile.json=${reportPath}`]),
  ],
];

/** The slowest test files of the run, from vitest's JSON report: where to look when the suite grows slow. */
function printSlowest(report, count) {
  const files = report.testResults
    .map((file) => ({ name: relative(root, file.name), ms: file.endTime - file.startTime }))
    .sort((a, b) => b.ms - a.ms);
  const total = files.reduce((sum, file) => sum + file.ms, 0);
  console.log(`\nThe ${Math.min(count, files.length)} slowest of ${files.length} test files (${(total / 1000).toFixed(1)} s summed):`);
  for (const file of files.slice(0, count)) console.log(`${(file.ms / 1000).toFixed(1).padStart(7)} s  ${file.name}`);
}

const started = Date.now();
rmSync(reportPath, { force: true });
try {
  for (const [index, [label, step]] of steps.entries()) {
    console.log(`\n==> [${index + 1}/${steps.length}] ${label}`);
    await step();
  }
} finally {
  // Failed or not: a test that hangs to its timeout is the usual reason a run grows slow.
  if (existsSync(reportPath)) printSlowest(JSON.parse(readFileSync(reportPath, 'utf8')), 10);
}

if (!existsSync(reportPath)) throw new Error('vitest wrote no report');
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
if (report.numTotalTests === 0) throw new Error('vitest ran no test');
if (process.env.CI && (report.numPendingTests > 0 || report.numTodoTests > 0)) {
  throw new Error(`${report.numPendingTests + report.numTodoTests} test(s) were skipped; CI allows none`);
}
console.log(`\nAll ${steps.length} steps passed in ${Math.round((Date.now() - started) / 1000)} s.`);
if (browserSkipped) {
  console.log(
    `!!! The browser tests did NOT run: no Chromium at ${chromium}. Install it (apt-get install -y chromium) or set ` +
      'RACK_WEBHOOKS_CHROMIUM, then run npx vitest run --project browser. !!!',
  );
}
console.log('The package matrix (TypeScript 5.0 and 7, Node 22 and 24, Bun, Deno) is not part of npm test: npm run test:package.');
console.log(`${report.numPassedTests} passed, ${report.numFailedTests} failed`);
