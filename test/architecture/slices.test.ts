import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { testSlices } from '../kit/slices.js';

/**
 * vitest's projects take their files from testSlices (vitest.config.ts): a file in no slice would
 * never run, and a database file in the unit slice would fail on a machine with no PostgreSQL.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

describe('test slices', () => {
  const slices = testSlices(ROOT);

  it('puts every test file in exactly one slice', () => {
    const all = [...slices.unit, ...slices.database, ...slices.browser];
    expect(new Set(all).size).toBe(all.length);
    expect(all.sort()).toEqual(testFiles(join(ROOT, 'test')).sort());
  });

  it('sorts a file by what its imports reach, through the helpers', () => {
    expect(slices.browser.sort()).toEqual([
      'test/console/browser.test.ts',
      'test/console/gaps-browser.test.ts',
      'test/console/polish.test.ts',
    ]);
    // Directly (databases.js), through a helper (helpers.js, console-fixture.ts), Redis, and PGlite directories.
    expect(slices.database).toEqual(
      expect.arrayContaining([
        'test/inbox/databases.test.ts',
        'test/inbox/inbox.test.ts',
        'test/console/api.test.ts',
        'test/dedup/redis-store.test.ts',
        'test/inbox/owner/ownership.test.ts',
      ]),
    );
    expect(slices.unit).toEqual(expect.arrayContaining(['test/signature/vectors.test.ts', 'test/inbox/work/loop.test.ts']));
  });
});
