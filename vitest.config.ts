import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { CHROMIUM, testSlices } from './test/kit/slices.js';

const root = dirname(fileURLToPath(import.meta.url));
const slices = testSlices(root);

// Outside CI a machine without Chromium skips the browser slice with one line nobody can miss; in
// CI (CI=true) the slice always runs, so a missing Chromium fails the run.
// Asked for by name (`npm run test:browser`), the slice runs too, and its tests fail saying where
// Chromium was looked for and how to install it, rather than vitest's "No projects matched the filter".
const askedForBrowser = process.argv.some(
  (arg, i) => arg === '--project=browser' || (arg === '--project' && process.argv[i + 1] === 'browser'),
);
const runBrowser = existsSync(CHROMIUM) || Boolean(process.env['CI']) || askedForBrowser;
// vitest evaluates this file again for each project that extends it: say it once.
const said = globalThis as { rackWebhooksBrowserSkipSaid?: boolean };
if (!runBrowser && said.rackWebhooksBrowserSkipSaid !== true) {
  said.rackWebhooksBrowserSkipSaid = true;
  console.warn(
    `\n!!! SKIPPING the ${slices.browser.length} browser test files: no Chromium at ${CHROMIUM} ` +
      '(apt-get install -y chromium, or set RACK_WEBHOOKS_CHROMIUM; then npx vitest run --project browser) !!!\n',
  );
}

export default defineConfig({
  test: {
    // One worker a core (vitest's default is one fewer: a single worker on the 2-core VM, which then
    // waits on PostgreSQL, child processes and HTTP with a core idle). One more than the cores ran
    // faster still but timed out CPU-bound property tests on a loaded machine.
    maxWorkers: availableParallelism(),
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      // The console's page runs in the browser: the end-to-end tests drive it in Chromium.
      exclude: ['src/generated/**', 'src/console/app/**'],
      reporter: ['text-summary', 'json-summary'],
      thresholds: { lines: 90, branches: 85, functions: 90, statements: 90 },
    },
    // `npx vitest run --project unit` (no service), `database` (PostgreSQL, PGlite, Redis), `browser` (Chromium).
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: slices.unit,
          // Type tests (*.test-d.ts) are checked by tsc, not run. npm test leaves them to its typecheck lane
          // (RACK_WEBHOOKS_TYPE_TESTS=tsc), whose `tsc --noEmit` covers test/ with the same tsconfig: the
          // same errors, without a second compile of src/ at the end of the run.
          typecheck: {
            enabled: process.env['RACK_WEBHOOKS_TYPE_TESTS'] !== 'tsc',
            include: ['test/**/*.test-d.ts'],
            tsconfig: './tsconfig.json',
          },
        },
      },
      {
        extends: true,
        // PGlite's data directories, bare and migrated, built once for the run (test/inbox/databases.ts copies them).
        test: { name: 'database', include: slices.database, globalSetup: ['test/kit/pglite-template-setup.ts'] },
      },
      ...(runBrowser ? [{ extends: true as const, test: { name: 'browser', include: slices.browser } }] : []),
    ],
  },
});
