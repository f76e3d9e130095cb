/**
 * Which slice each test file belongs to, for vitest's projects (vitest.config.ts):
 *
 * - `browser`: reaches test/console/browser.ts (Chromium through playwright-core);
 * - `database`: reaches test/inbox/databases.ts (PostgreSQL, PGlite), test/kit/pglite-directory.ts
 *   (PGlite directories copied from the run's template) or test/dedup/redis-helpers.ts (Redis);
 * - `unit`: the rest, which needs no service.
 *
 * Read from the files' relative imports, followed through the test helpers, so a new test file
 * lands in the right slice without a list to keep in step.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export type Slice = 'unit' | 'database' | 'browser';

/** The default Chromium; RACK_WEBHOOKS_CHROMIUM names another (scripts/test.mjs reads the same variable). */
export const CHROMIUM = process.env['RACK_WEBHOOKS_CHROMIUM'] ?? '/usr/bin/chromium';

const MARKERS: readonly (readonly [string, Exclude<Slice, 'unit'>])[] = [
  ['test/console/browser.ts', 'browser'],
  ['test/inbox/databases.ts', 'database'],
  ['test/kit/pglite-directory.ts', 'database'],
  ['test/dedup/redis-helpers.ts', 'database'],
];

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The test-side .ts files a file imports (`./x.js` is `./x.ts`); src/ and other files are not followed. */
function helperImports(file: string, testRoot: string): string[] {
  const found: string[] = [];
  for (const [, specifier] of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
    const path = resolve(dirname(file), specifier!.replace(/\.js$/, '.ts'));
    if (!relative(testRoot, path).startsWith('..') && path.endsWith('.ts') && existsSync(path)) found.push(path);
  }
  return found;
}

/** Project-relative test file paths by slice. A file reaching both markers is a browser file. */
export function testSlices(root: string): Record<Slice, string[]> {
  const testRoot = join(root, 'test');
  const markers = new Map(MARKERS.map(([path, slice]) => [join(root, path), slice]));
  const slices: Record<Slice, string[]> = { unit: [], database: [], browser: [] };
  for (const file of testFiles(testRoot)) {
    const reached = new Set<Slice>();
    const seen = new Set<string>();
    const queue = [file];
    while (queue.length > 0) {
      const next = queue.pop()!;
      if (seen.has(next)) continue;
      seen.add(next);
      const marker = markers.get(next);
      if (marker !== undefined) reached.add(marker);
      queue.push(...helperImports(next, testRoot));
    }
    const slice: Slice = reached.has('browser') ? 'browser' : reached.has('database') ? 'database' : 'unit';
    slices[slice].push(relative(root, file));
  }
  return slices;
}
