/**
 * The one set-up of a test file, called at its top: bounds for each test and hook that allow for a
 * loaded machine (two cores shared with other suites), and, for the suites on the databases,
 * PGlite's template readied before the first test so that its boot is not spent from a test's time.
 */
import { beforeAll, vi } from 'vitest';

export interface SetUpOptions {
  /** Each test's bound. @defaultValue 15 s: an inbox test stays well under a second alone. */
  readonly testTimeoutMs?: number;
  /** Each hook's bound, where a file's hooks open databases or processes (vitest's own 10 s otherwise). */
  readonly hookTimeoutMs?: number;
  /** Ready PGlite's template in a beforeAll (3 to 5 s alone, far longer under load, when the run's globalSetup did not). @defaultValue true */
  readonly pglite?: boolean;
}

export function setUp(options: SetUpOptions = {}): void {
  const { testTimeoutMs = 15_000, hookTimeoutMs, pglite = true } = options;
  vi.setConfig(hookTimeoutMs === undefined ? { testTimeout: testTimeoutMs } : { testTimeout: testTimeoutMs, hookTimeout: hookTimeoutMs });
  // Imported here: a suite off the databases loads no client.
  if (pglite) beforeAll(async () => (await import('../inbox/databases.js')).preparePGlite(), 180_000);
}
