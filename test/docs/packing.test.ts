// What `npm pack` makes (issue 38, point 7): on an unbuilt clone it builds first (the `prepack`
// script) rather than pack an empty or stale dist/. The package scripts pack with --ignore-scripts:
// they pack the dist/ the tests ran against (scripts/lib.mjs).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

describe('npm pack', () => {
  it('builds first: prepack runs the build, which empties dist/ before tsup writes it', () => {
    expect(manifest.scripts['prepack']).toBe('npm run build');
    expect(manifest.scripts['build']).toMatch(/rmSync\('dist'.*&& tsup$/);
    // `npm ci` runs neither (prepack is for pack and publish only): no `prepare` nor `install` script builds.
    expect(Object.keys(manifest.scripts).filter((name) => /^(pre|post)?(install|prepare)$/.test(name))).toEqual([]);
  });
});
