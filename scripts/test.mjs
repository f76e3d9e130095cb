// `npm test`: everything that gates a change. In CI (CI=true) nothing may be skipped: a step that
// cannot run fails the run. `--package` adds the package matrix (TypeScript 5.0 and 7, Node 22 and
// 24, Bun, Deno: `npm run test:package`) as one more check; .ci/run runs it after this instead.
//
// The tests run the built JavaScript, so it is built first (a few seconds: tsup without its
// declarations). Then the checks that only read the tree or dist/ (the declarations, typecheck,
// lint, format, sizes, snippets, API reference) run side by side, one lane a core, and then vitest.
// The checks once ran beside vitest at a lower CPU priority; on this 2-core machine that doubled
// vitest's time (522 and 533 s against about 275 s alone, two fresh-clone runs on a quiet machine),
// so the two phases take turns. Every check runs and must pass, even when an earlier one failed:
// its output is printed whole, a failure named as it happens and again at the end.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { root, run, startLanes, tmp } from './lib.mjs';

// The same default and variable as test/kit/slices.ts, which leaves the browser slice out without it.
const chromium = process.env.RACK_WEBHOOKS_CHROMIUM ?? '/usr/bin/chromium';
const browserSkipped = !process.env.CI && !existsSync(chromium);
const withPackage = process.argv.includes('--package');
const reportPath = join(tmp, 'vitest.json');
const bin = (name) => join(root, 'node_modules/.bin', name);
const node = (script, ...args) => [process.execPath, [script, ...args]];

/** The checks, in the order they start (one lane a core); a lane's commands run one after the other. */
const DECLARATIONS = 'declarations (tsup, the .d.ts of every entry), README and docs snippets, API reference';
const checks = [
  {
    // First: the longest chain (the package matrix waits for it too).
    label: DECLARATIONS,
    commands: [
      [bin('tsup'), ['--silent'], { RACK_WEBHOOKS_BUILD: 'types' }],
      // Both compile against the built package's declarations.
      node('scripts/check-readme-snippets.mjs'),
      // --check: no HTML, and no second type check of the tree (the typecheck lane does it).
      node('scripts/docs.mjs', '--check'),
    ],
  },
  { label: 'typecheck (tsc --noEmit; the *.test-d.ts type tests too)', commands: [[bin('tsc'), ['--noEmit', '-p', 'tsconfig.json']]] },
  { label: 'lint (eslint --max-warnings 0)', commands: [[bin('eslint'), ['--max-warnings', '0', '.']]] },
  {
    label: 'generated code matches schemas/ (npm run generate -- --check); format (prettier --check)',
    commands: [node('scripts/generate.mjs', '--check'), [bin('prettier'), ['--check', '--log-level', 'warn', '.']]],
  },
  {
    // One after the other: both measure bundles in .tmp/size.
    label: 'core and fetch adapter import no node: module; bundle sizes (receiver at most 40 kB, verify 20 kB); docs/ figures current',
    commands: [node('scripts/check-runtime-neutral.mjs'), node('scripts/check-size.mjs'), node('scripts/docs-figures.mjs', '--check')],
  },
  ...(withPackage
    ? [
        {
          label: 'the package matrix (npm run test:package: publint, attw, TypeScript 5.0/5.9/7, Node 20/22/24, Bun, Deno)',
          commands: [node('scripts/test-package.mjs')],
          after: [DECLARATIONS],
        },
      ]
    : []),
];

/** vitest in the foreground, its output streamed; resolves to its exit status. */
function runVitest() {
  const args = ['run', '--coverage', '--reporter=default', '--reporter=json', `--outputFile.json=${reportPath}`];
  return new Promise((resolve) => {
    // The type tests (*.test-d.ts) are left to the typecheck lane: its tsc checks the same files (vitest.config.ts).
    const env = { ...process.env, RACK_WEBHOOKS_TYPE_TESTS: 'tsc' };
    const child = spawn(bin('vitest'), args, { cwd: root, env, stdio: 'inherit' });
    child.on('close', (code, signal) => resolve(code ?? signal));
    child.on('error', (error) => resolve(error.message));
  });
}

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
const seconds = () => Math.round((Date.now() - started) / 1000);
rmSync(reportPath, { force: true });

console.log('\n==> [1/3] build the JavaScript (tsup; its declarations are built with the checks)');
// Nothing to test without it: a failed build stops here.
rmSync(join(root, 'dist'), { recursive: true, force: true });
run(bin('tsup'), ['--silent'], { env: { ...process.env, RACK_WEBHOOKS_BUILD: 'js' } });

console.log(`\n==> [2/3] ${checks.length} checks, side by side`);
const checked = await startLanes(checks, {
  onEnd: (lane) => {
    console.log(`--- ${lane.label} (${lane.seconds.toFixed(1)} s)${lane.status === 0 ? '' : ': FAILED'}`);
    process.stdout.write(lane.output);
  },
});

console.log('\n==> [3/3] unit, database and browser tests (vitest projects, with coverage)');
const vitestStatus = await runVitest();
// Failed or not: a test that hangs to its timeout is the usual reason a run grows slow.
const report = existsSync(reportPath) ? JSON.parse(readFileSync(reportPath, 'utf8')) : undefined;
if (report !== undefined) printSlowest(report, 10);

const failures = checked.filter((lane) => lane.status !== 0).map((lane) => `${lane.label}: ${lane.status}`);
if (vitestStatus !== 0) failures.push(`vitest exited with ${vitestStatus}`);
if (report === undefined) failures.push('vitest wrote no report');
else if (report.numTotalTests === 0) failures.push('vitest ran no test');
else if (process.env.CI && (report.numPendingTests > 0 || report.numTodoTests > 0)) {
  failures.push(`${report.numPendingTests + report.numTodoTests} test(s) were skipped; CI allows none`);
}
if (failures.length > 0) {
  console.log(`\nnpm test FAILED after ${seconds()} s:\n  ${failures.join('\n  ')}`);
  if (report !== undefined) console.log(`${report.numPassedTests} passed, ${report.numFailedTests} failed`);
  process.exit(1);
}
console.log(`\nThe build, ${checks.length} checks and the tests passed in ${seconds()} s.`);
if (browserSkipped) {
  console.log(
    `!!! The browser tests did NOT run: no Chromium at ${chromium}. Install it (apt-get install -y chromium) or set ` +
      'RACK_WEBHOOKS_CHROMIUM, then run npx vitest run --project browser. !!!',
  );
}
if (!withPackage) {
  console.log('The package matrix (TypeScript 5.0 and 7, Node 22 and 24, Bun, Deno) is not part of npm test: npm run test:package.');
}
console.log(`${report.numPassedTests} passed, ${report.numFailedTests} failed`);
