import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, inject, it } from 'vitest';
import type { PGliteTemplates } from '../kit/pglite-template-setup.js';

/**
 * Real databases for the inbox tests, one isolated place per test: a fresh schema in the shared
 * PostgreSQL for `pg` and `postgres` (so test files can run in parallel workers and a failed run
 * leaves nothing another run can trip on), a fresh in-memory PGlite otherwise.
 *
 * PostgreSQL being unreachable is an error, never a skip: CI counts a skipped test as a failure,
 * and .ci/run starts the server.
 */
export type ClientKind = 'pg' | 'postgres' | 'pglite';

/**
 * Every client kind, for the suites about what differs between them: the drivers (types, errors,
 * transactions), migrations, re-entry and PGlite's single connection.
 */
export const CLIENT_KINDS: readonly ClientKind[] = ['pg', 'postgres', 'pglite'];

/**
 * Every scenario on every client: RACK_WEBHOOKS_TEST_CLIENTS=all (RACK_WEBHOOKS_TEST_PGLITE=all,
 * its older name, too). Before a change to a driver adapter (src/database/) or to SQL a
 * driver could read differently, run the database slice so.
 */
const EVERY_CLIENT = process.env['RACK_WEBHOOKS_TEST_CLIENTS'] === 'all' || process.env['RACK_WEBHOOKS_TEST_PGLITE'] === 'all';

/**
 * The inbox scenarios (the same SQL whatever the client) run on `pg`. postgres.js and PGlite run
 * the suites about what differs between clients (CLIENT_KINDS): a scenario on them again tests
 * the same SQL again, at twice the time for postgres.js and five to ten times for PGlite.
 */
export const SCENARIO_KINDS: readonly ClientKind[] = EVERY_CLIENT ? CLIENT_KINDS : ['pg'];

/**
 * In a suite over CLIENT_KINDS, `it` for a test that is a scenario rather than about the client
 * (it registers the test only where SCENARIO_KINDS runs scenarios). Nothing is registered on the
 * other clients rather than skipped: CI fails a run with a skipped test.
 */
export function scenarioIt(kind: ClientKind): typeof it {
  return SCENARIO_KINDS.includes(kind) ? it : ((() => {}) as unknown as typeof it);
}

export const POSTGRES_URL = process.env['RACK_WEBHOOKS_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface Clients {
  pg: pg.Pool;
  postgres: postgres.Sql;
  pglite: PGlite;
}

export interface TestDatabase<K extends ClientKind = ClientKind> {
  readonly kind: K;
  /** The client, exactly as a user would hand it to `createInbox`. */
  readonly database: Clients[K];
  /** `public` for PGlite. */
  readonly schema: string;
  /** The inbox table name to pass as the `table` option (schema-qualified on PostgreSQL). */
  readonly table: string;
  /** A query through the client's own API, for assertions that should not trust the SDK. */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /** Ends the client and drops the schema; calling it again is harmless. */
  close(): Promise<void>;
}

// Schemas carry their creation time so a run can sweep what killed runs left behind.
const SCHEMA_PREFIX = 'rwt_';
const STALE_AFTER_SECONDS = 3600;
/**
 * The names the sweep dates and drops: `rwt_<hex seconds>_<hex random>`, nothing else. It once read
 * `rwt_example_...` (test/examples' schemas) as created at 0xe seconds, so every test file that
 * started beside an example's DATABASE_URL test dropped that example's live tables under it.
 */
const DATED_SCHEMA = /^rwt_([0-9a-f]+)_[0-9a-f]+$/;

export function pgPoolTo(url: string = POSTGRES_URL): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 8, connectionTimeoutMillis: 5000 });
  // An idle client's error (a test killing backends) would otherwise crash the worker; the
  // queries that needed the connection still reject.
  pool.on('error', () => {});
  return pool;
}

export function postgresTo(url: string = POSTGRES_URL): postgres.Sql {
  return postgres(url, { max: 8, onnotice: () => {} });
}

/** A PostgreSQL URL nothing listens on: a port the kernel just handed out and we released. */
export async function connectionRefusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not find a free port');
  return `postgres://postgres@127.0.0.1:${address.port}/test`;
}

export interface OpenOptions {
  /**
   * PGlite only: start from a copy of a data directory the inbox is already migrated into, as
   * `public.deliveries` (migrate() then finds nothing to do). PostgreSQL schemas always start empty.
   */
  readonly migrated?: boolean;
}

/**
 * One database for the whole test file: opened before its first test (handed to `use`, which keeps
 * it in the file's `db`) and closed after its last.
 */
export function databaseForFile<K extends ClientKind>(kind: K, use: (db: TestDatabase<K>) => void): void {
  let opened: TestDatabase<K> | undefined;
  beforeAll(async () => {
    opened = await openDatabase(kind);
    use(opened);
  });
  afterAll(async () => {
    await opened?.close();
  });
}

export async function openDatabase<K extends ClientKind>(kind: K, options?: OpenOptions): Promise<TestDatabase<K>>;
export async function openDatabase(kind: ClientKind, options: OpenOptions = {}): Promise<TestDatabase> {
  if (kind === 'pglite') return openPGlite(options.migrated ?? false);
  const schema = await createSchema();
  const table = `${schema}.deliveries`;
  // Once only (a test closing early and an afterEach closing again is fine), and the test's client
  // first: a transaction it left open would hold locks the drop waits on.
  let closing: Promise<void> | undefined;
  const close = (end: () => Promise<void>) =>
    (closing ??= (async () => {
      await end();
      await withAdmin((admin) => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    })());
  if (kind === 'pg') {
    const pool = pgPoolTo();
    return {
      kind,
      database: pool,
      schema,
      table,
      query: async (text, params) => (await pool.query(text, params as unknown[])).rows,
      close: () => close(() => pool.end()),
    } satisfies TestDatabase<'pg'>;
  }
  const sql = postgresTo();
  return {
    kind,
    database: sql,
    schema,
    table,
    query: async <R>(text: string, params?: readonly unknown[]) =>
      [...(await sql.unsafe(text, (params ?? []) as postgres.ParameterOrJSON<never>[]))] as R[],
    close: () => close(() => sql.end({ timeout: 5 })),
  } satisfies TestDatabase<'postgres'>;
}

// A fresh PGlite takes 2.5 to 3.5 s to boot here (initdb); a copy of a booted one's data directory
// about 0.9 s. The database slice's globalSetup (test/kit/pglite-template-setup.ts) boots one per
// run, bare and migrated, and writes both data directories to files; each worker reads them once.
// A file run without that setup boots its own template instead, never handed to a test.
const templateData = new Map<keyof PGliteTemplates, Promise<Blob>>();
let booted: Promise<PGlite> | undefined;

function providedTemplate(which: keyof PGliteTemplates): Promise<Blob> | undefined {
  const files = inject('pgliteTemplates') as PGliteTemplates | undefined;
  if (files === undefined) return undefined;
  let data = templateData.get(which);
  if (data === undefined) {
    data = readFile(files[which]).then((bytes) => new Blob([bytes]));
    templateData.set(which, data);
  }
  return data;
}

/** Reads the template (or boots one) ahead of the first test, so that test's timeout is not spent on it. */
export async function preparePGlite(): Promise<void> {
  const data = providedTemplate('migrated');
  if (data !== undefined) await data;
  else await (booted ??= PGlite.create());
}

async function openPGlite(migrated: boolean): Promise<TestDatabase<'pglite'>> {
  const data = providedTemplate(migrated ? 'migrated' : 'bare');
  const database =
    data !== undefined ? await PGlite.create({ loadDataDir: await data }) : await (await (booted ??= PGlite.create())).clone();
  if (!(database instanceof PGlite)) throw new Error('PGlite.clone() no longer returns a PGlite');
  return {
    kind: 'pglite',
    database,
    schema: 'public',
    table: 'deliveries',
    query: async (text, params) => (await database.query(text, params as unknown[])).rows as never[],
    close: async () => {
      if (!database.closed) await database.close();
    },
  };
}

let swept = false;

async function createSchema(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const schema = `${SCHEMA_PREFIX}${now.toString(16)}_${randomBytes(6).toString('hex')}`;
  await withAdmin(async (admin) => {
    if (!swept) {
      swept = true;
      await sweepStaleSchemas(admin, now);
    }
    await admin.query(`CREATE SCHEMA "${schema}"`);
  });
  return schema;
}

async function sweepStaleSchemas(admin: pg.Client, now: number): Promise<void> {
  const { rows } = await admin.query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname LIKE '${SCHEMA_PREFIX}%'`);
  for (const { nspname } of rows) {
    const dated = DATED_SCHEMA.exec(nspname);
    // A name it cannot date is not one of its own: never dropped.
    if (dated === null) continue;
    const created = Number.parseInt(dated[1]!, 16);
    // IF EXISTS: another worker may be sweeping the same schema.
    if (now - created > STALE_AFTER_SECONDS) await admin.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
  }
}

/** One short-lived connection for DDL, failing with a message that says what to start. */
async function withAdmin<T>(use: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
  } catch (error) {
    await admin.end().catch(() => {});
    throw new Error(
      `Cannot connect to PostgreSQL at ${redact(POSTGRES_URL)} (${reason(error)}). ` +
        'The inbox tests need it and are never skipped: start it (.ci/run shows how) or set RACK_WEBHOOKS_TEST_DATABASE_URL.',
      { cause: error },
    );
  }
  try {
    return await use(admin);
  } finally {
    await admin.end();
  }
}

// Connection refused on a name with two addresses is an AggregateError with an empty message.
function reason(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return [code, message].filter((part) => typeof part === 'string' && part !== '').join(': ') || String(error);
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}
