/**
 * vitest globalSetup of the database slice: PGlite's initdb (3 to 5 s here, far longer under load)
 * and the inbox's migrations run once per run, here, instead of once per test file and per test.
 * Each test then loads a copy of these data directories (test/inbox/databases.ts), or copies the
 * bare one on disk where a test needs a PGlite directory (test/kit/pglite-directory.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { createInbox } from '../../src/inbox.js';

export interface PGliteTemplates {
  /** A data directory right after initdb. */
  readonly bare: string;
  /** The same with the inbox migrated into `public.deliveries`, the table PGlite tests use. */
  readonly migrated: string;
  /** The bare data directory on disk, as `new PGlite(dir)` or `openPGlite(dir)` leave a new one. */
  readonly directory: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplates: PGliteTemplates;
  }
}

export const PGLITE_TABLE = 'deliveries';

export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'rack-webhooks-pglite-templates-'));
  const database = await PGlite.create();
  try {
    const bare = join(dir, 'bare.tar');
    writeFileSync(bare, Buffer.from(await (await database.dumpDataDir('none')).arrayBuffer()));
    await createInbox({ database, table: PGLITE_TABLE }).migrate();
    const migrated = join(dir, 'migrated.tar');
    writeFileSync(migrated, Buffer.from(await (await database.dumpDataDir('none')).arrayBuffer()));
    // Loading the bare dump into a directory takes about half an initdb, once.
    const directory = join(dir, 'directory');
    await (await PGlite.create(directory, { loadDataDir: new Blob([readFileSync(bare)]) })).close();
    project.provide('pgliteTemplates', { bare, migrated, directory });
  } finally {
    await database.close();
  }
  return () => rmSync(dir, { recursive: true, force: true });
}
