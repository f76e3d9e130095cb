/**
 * PGlite directories for tests about them (ownership, the CLI and console on a directory, the
 * PGlite example). A new directory costs PGlite an initdb in WebAssembly (3 to 5 s of CPU here,
 * far longer on a loaded machine); these tests are about what happens after, so they start from a
 * copy of the run's template, made once by the database slice's globalSetup
 * (test/kit/pglite-template-setup.ts). A test about creating a directory does not use this.
 */
import { cpSync } from 'node:fs';
import { inject } from 'vitest';
import type { PGliteTemplates } from './pglite-template-setup.js';

/**
 * Fills `path` (absent or empty) with a bare PGlite data directory, as PGlite's initdb leaves one,
 * and returns it. Run without the database slice's globalSetup, it leaves `path` for PGlite to create.
 */
export function pgliteDirectory(path: string): string {
  const templates = inject('pgliteTemplates') as PGliteTemplates | undefined;
  if (templates !== undefined) cpSync(templates.directory, path, { recursive: true });
  return path;
}
