/**
 * `--database` / `listen --inbox`: a postgres:// URL opens a `pg` Pool, anything else is a PGlite
 * directory. Both clients are optional peers of the package, loaded only when asked for, so a
 * missing one is a clear "npm install ..." instead of a stack trace. A password in the URL never
 * reaches the output: every message shows the URL with it masked.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { MissingPeerError, openDirectory, type PGliteDirectory } from '../inbox/facade/index.js';
import { describeThrown } from '../shared/thrown.js';
import { UsageError } from './usage-error.js';

export type DatabaseTarget =
  | {
      readonly kind: 'postgres';
      readonly url: string;
      readonly shown: string;
      readonly address: string;
      readonly secrets: readonly string[];
    }
  | { readonly kind: 'pglite'; readonly dir: string; readonly shown: string };

export interface OpenedDatabase {
  readonly target: DatabaseTarget;
  /** The client, as `createInbox({ database })` takes it. */
  readonly client: unknown;
  /** One statement, for the few things the inbox API does not do. */
  query(text: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** Ends the pool or closes PGlite (and gives back its directory); calling it again is harmless. */
  close(): Promise<void>;
}

const POSTGRES_URL = /^postgres(ql)?:\/\//i;
const OTHER_URL = /^[a-z][a-z0-9+.-]*:\/\//i;
const PG_PACKAGE = 'pg';
const PGLITE_PACKAGE = '@electric-sql/pglite';

/** The URL with its password (user:PASSWORD@ and any ?password=) replaced by ***. */
function maskedUrl(url: URL): string {
  const masked = new URL(url.href);
  if (masked.password !== '') masked.password = '***';
  for (const name of [...masked.searchParams.keys()]) if (/password/i.test(name)) masked.searchParams.set(name, '***');
  return masked.href.replace(/%2A%2A%2A/g, '***');
}

/** A path as the user could paste it back into a shell. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

export function databaseTarget(text: string, flag: string): DatabaseTarget {
  if (text === '') throw new UsageError(`${flag} is empty: pass a postgres:// URL or a PGlite directory`);
  if (POSTGRES_URL.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      // Not echoed: the text holds a password as often as not.
      throw new UsageError(`${flag} is not a valid postgres:// URL (write postgres://user:password@host:5432/database)`);
    }
    const secrets = [
      url.password,
      safeDecode(url.password),
      ...[...url.searchParams].filter(([name]) => /password/i.test(name)).map(([, value]) => value),
    ];
    const host = url.host !== '' ? url.host : (url.searchParams.get('host') ?? 'localhost');
    const address = /:\d+$/.test(host) || host.startsWith('/') ? host : `${host}:5432`;
    return { kind: 'postgres', url: text, shown: maskedUrl(url), address, secrets: secrets.filter((secret) => secret.length > 0) };
  }
  if (OTHER_URL.test(text)) {
    throw new UsageError(
      `${flag} must be a postgres:// or postgresql:// URL, or a directory for PGlite; got a ${text.slice(0, text.indexOf(':'))}:// URL`,
    );
  }
  refuseMistakenDirectory(text, flag);
  return { kind: 'pglite', dir: resolve(text), shown: shellWord(text) };
}

/** `127.0.0.1:5432/db`, `db.internal:5432`: a host and a port, with or without a path. */
const HOST_AND_PORT = /^(\[[\da-f:.]+\]|[\w.-]+):\d{1,5}(\/|$)/i;
/** `localhost/test`, `127.0.0.1/db`, `localhost`: a host only a database has, no port (a directory by that name is taken as one). */
const LOCAL_HOST_AND_DATABASE = /^(localhost|\d{1,3}(\.\d{1,3}){3}|\[[\da-f:.]+\])(\/[\w.-]*)?$/i;
/** `user:password@host/db`: credentials then a host, no scheme. */
const CREDENTIALS_AT_HOST = /^[^/\s@]+@[\w.[\]-]+([:/]|$)/;
/** `$DATABASE_URL`, `${DATABASE_URL}`, `%DATABASE_URL%`: the shell did not expand it. */
const SHELL_VARIABLE = /^(\$\{?[A-Za-z_]\w*\}?|%\w+%)$/;
/** `DATABASE_URL`: a variable's name with its `$` forgotten (all capitals, an underscore). */
const BARE_VARIABLE_NAME = /^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/;

/**
 * A value that was meant as a database address, not a directory: without this, PGlite would
 * create a database in a folder named `127.0.0.1:5432` and `migrate` would succeed on it.
 */
function refuseMistakenDirectory(text: string, flag: string): void {
  const pglite = 'a PGlite directory is a path such as ./inbox-data';
  if (CREDENTIALS_AT_HOST.test(text)) {
    // Not echoed: it holds a password as often as not.
    throw new UsageError(`${flag} looks like a database URL without its scheme: put postgres:// in front of it (${pglite})`);
  }
  if (LOCAL_HOST_AND_DATABASE.test(text) && !existsSync(text)) {
    throw new UsageError(
      `${flag} ${JSON.stringify(text)} looks like a host and database without a scheme: write postgres://${text} ` +
        `(with user:password@ before the host if needed; ${pglite})`,
    );
  }
  if (HOST_AND_PORT.test(text)) {
    throw new UsageError(
      `${flag} ${JSON.stringify(text)} looks like a host and port without a scheme: write postgres://${text} ` +
        `(with user:password@ before the host if needed; ${pglite})`,
    );
  }
  const variable = SHELL_VARIABLE.test(text) ? text.replace(/[${}%]/g, '') : BARE_VARIABLE_NAME.test(text) ? text : undefined;
  if (variable === undefined || (!SHELL_VARIABLE.test(text) && existsSync(text))) return;
  const set = process.env[variable] !== undefined ? `; it is set in this environment` : '';
  throw new UsageError(
    `${flag} ${JSON.stringify(text)} is the name of an environment variable, not its value: write ${flag} "$${variable}"${set} (${pglite})`,
  );
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Any password in the target, wherever a client's message might quote it, masked. */
export function scrub(message: string, target: DatabaseTarget): string {
  if (target.kind !== 'postgres') return message;
  return [...target.secrets].sort((a, b) => b.length - a.length).reduce((text, secret) => text.split(secret).join('***'), message);
}

/** Node's "Cannot find package 'pg' imported from ..." for the package itself (not one of its own dependencies). */
export function isMissingPackage(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && typeof message === 'string' && message.includes(`'${name}'`);
}

export function missingPeerError(target: DatabaseTarget): Error {
  return target.kind === 'postgres'
    ? new Error(`a postgres:// URL needs the pg package, which is not installed: run npm install ${PG_PACKAGE}`)
    : new Error(
        `a PGlite directory needs the ${PGLITE_PACKAGE} package, which is not installed: run npm install ${PGLITE_PACKAGE} (or pass a postgres:// URL)`,
      );
}

/** `import(name)`, with a missing package turned into the one line that says what to install. */
export async function loadPeer<T>(name: string, target: DatabaseTarget, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissingPackage(error, name)) throw missingPeerError(target);
    throw new Error(`cannot load the ${name} package: ${describeThrown(error)}`, { cause: error });
  }
}

/** Why a connection failed, in a few words: an AggregateError (two addresses refused) has no message of its own. */
export function connectionReason(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (typeof code !== 'string' || code === '') return text || describeThrown(error);
  if (text === '' || text.includes(code)) return text || code;
  return /^[0-9A-Z]{5}$/.test(code) ? `${text} (SQLSTATE ${code})` : `${code}: ${text}`;
}

export function unreachableError(target: DatabaseTarget, error: unknown): Error {
  const where = target.kind === 'postgres' ? `the database at ${target.address}` : `the PGlite database in ${target.shown}`;
  return new Error(scrub(`cannot reach ${where}: ${connectionReason(error)}`, target), { cause: error });
}

export interface OpenOptions {
  /** Create a PGlite directory that does not exist yet (migrate, listen); else it must hold a database. */
  create: boolean;
  /** Connections in the pool (PostgreSQL). */
  poolSize: number;
}

export async function openDatabase(target: DatabaseTarget, options: OpenOptions): Promise<OpenedDatabase> {
  return target.kind === 'postgres' ? openPostgres(target, options) : openPGlite(target, options);
}

async function openPostgres(target: DatabaseTarget & { kind: 'postgres' }, options: OpenOptions): Promise<OpenedDatabase> {
  const pg = await loadPeer(PG_PACKAGE, target, () => import('pg'));
  const Pool = (pg.default ?? pg).Pool;
  // A host that drops packets would otherwise hang the command for the OS's TCP timeout.
  const pool = new Pool({
    connectionString: target.url,
    max: options.poolSize,
    connectionTimeoutMillis: 10_000,
    application_name: 'rack-webhooks',
  });
  pool.on('error', () => {}); // an idle client's lost connection: the next query reports it
  let ended = false;
  const close = async () => {
    if (ended) return;
    ended = true;
    await pool.end();
  };
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await close().catch(() => {});
    throw unreachableError(target, error);
  }
  return { target, client: pool, query: async (text, params) => (await pool.query(text, params as unknown[])).rows, close };
}

function directoryExists(dir: string, shown: string): boolean {
  let stat;
  try {
    stat = statSync(dir);
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return false;
    throw new UsageError(`cannot read the PGlite directory ${shown} (${(error as { code?: string }).code ?? 'error'})`);
  }
  if (!stat.isDirectory()) throw new UsageError(`${shown} is a file: pass a directory for PGlite, or a postgres:// URL`);
  return true;
}

/** A new directory for a new database, said in one line: a mistyped path must not pass unnoticed. */
function saidCreated(target: DatabaseTarget & { kind: 'pglite' }): void {
  process.stderr.write(`rack-webhooks: created ${target.dir} for a new PGlite database\n`);
}

/** Read once the directory is this process's own: the files of an owner that is gone are what it left. */
function holdsDatabase(dir: string, shown: string): boolean {
  if (existsSync(`${dir}/PG_VERSION`)) return true;
  if (readdirSync(dir).every((entry) => entry.startsWith('.s.'))) return false; // nothing, or owners' sockets
  // PGlite would initialise a cluster right among these files.
  throw new UsageError(`${shown} is neither a PGlite database nor empty: pass a new or empty directory for PGlite, or a postgres:// URL`);
}

/**
 * A directory that a running app (or another command) owns is reached through that owner: what
 * the command reads and writes is the app's own data, and the app's workers run what it requeues.
 */
async function openPGlite(target: DatabaseTarget & { kind: 'pglite' }, options: OpenOptions): Promise<OpenedDatabase> {
  const noDatabase = new Error(
    `no PGlite database in ${target.shown}: create it with rack-webhooks inbox migrate --database ${target.shown}`,
  );
  const exists = directoryExists(target.dir, target.shown);
  if (!exists && !options.create) throw noDatabase;
  let directory: PGliteDirectory;
  try {
    directory = await openDirectory(target.dir, { poolSize: options.poolSize }, (dir) => {
      if (!holdsDatabase(dir, target.shown) && !options.create) throw noDatabase;
    });
  } catch (error) {
    if (error instanceof UsageError || error === noDatabase) throw error;
    if (error instanceof MissingPeerError) throw error.peer === PGLITE_PACKAGE ? missingPeerError(target) : new Error(error.message);
    throw new Error(`cannot open the PGlite database in ${target.shown}: ${describeThrown(error)}`, { cause: error });
  }
  if (!exists) saidCreated(target);
  const client = directory.client as { query(text: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }> };
  return {
    target,
    client: directory,
    query: async (text, params) => (await client.query(text, params as unknown[])).rows,
    close: () => directory.close(),
  };
}
