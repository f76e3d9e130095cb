/**
 * What every inbox subcommand does around its own work: read --database and --table, open the
 * database, hand an inbox over, close it whatever happens, and turn a database failure into the
 * one line that says what to do.
 */
import {
  composeInbox,
  DEFAULT_TABLE,
  type Inbox,
  inboxError,
  type InboxMonitor,
  type InboxOperator,
  resolveTableNames,
  type TableNames,
  WebhookInboxError,
} from '../inbox/facade/index.js';
import { UsageError, stringFlag, type FlagDeclarations, type Flags } from './args.js';
import { databaseTarget, openDatabase, scrub, unreachableError, type DatabaseTarget, type OpenedDatabase } from './open-database.js';

/** Every inbox subcommand's and the console's way to name the database and its table. */
export const DATABASE_FLAGS = {
  database: {
    type: 'string',
    value: 'D',
    help: `a postgres:// or postgresql:// URL (needs npm install pg), or a directory
holding a PGlite database (needs npm install @electric-sql/pglite); a
PGlite directory is open in one process at a time`,
  },
  table: {
    type: 'string',
    value: 'T',
    help: `the inbox table (default ${DEFAULT_TABLE}; may be schema-qualified,
such as ops.deliveries)`,
  },
} as const satisfies FlagDeclarations;

export interface InboxSession {
  /** What the commands read and change: list, get, retry, replay, stats, prune, history, alerts. */
  readonly operator: InboxOperator;
  /** Health, workers, refusals. */
  readonly monitor: InboxMonitor;
  /** The whole inbox: only for migrate and for a receiver storing into it (`inbox import`). */
  readonly inbox: Inbox;
  readonly database: OpenedDatabase;
  readonly names: TableNames;
}

/** --table checked as createInbox will, before anything is opened. */
export function tableNames(flags: Flags, flag = '--table'): TableNames {
  const table = stringFlag(flags, 'table');
  try {
    return resolveTableNames(table);
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`);
  }
}

/** --database (or listen's --inbox), checked before anything is opened. */
export function targetFlag(flags: Flags, name: 'database' | 'inbox'): DatabaseTarget {
  const text = stringFlag(flags, name);
  if (text === undefined) throw new UsageError(`no database: pass --${name} <postgres:// URL | PGlite directory>`);
  return databaseTarget(text, `--${name}`);
}

/** The command that creates the schema, for the messages that need it run. */
export function migrateHint(target: DatabaseTarget, names: TableNames): string {
  const table = names.display === DEFAULT_TABLE ? '' : ` --table ${names.display}`;
  return `rack-webhooks inbox migrate --database ${target.shown}${table}`;
}

/** A failure while using the database, as the line the user needs; anything else unchanged. */
export function databaseFailure(error: unknown, target: DatabaseTarget, names: TableNames): unknown {
  const databaseError =
    error instanceof WebhookInboxError
      ? error
      : hasDatabaseCode(error)
        ? inboxError(error, names.display, 'running a statement')
        : undefined;
  if (databaseError === undefined) return error;
  switch (databaseError.code) {
    case 'inbox_not_migrated':
      return new Error(`the database has no inbox table ${names.display} (or an older schema of it): run ${migrateHint(target, names)}`, {
        cause: error,
      });
    case 'inbox_unavailable':
      return unreachableError(target, databaseError.cause ?? databaseError);
    default:
      return new Error(scrub(databaseError.message, target), { cause: error });
  }
}

/** A SQLSTATE, or a socket's errno code (ECONNRESET): the database or the way to it failed, not this tool. */
function hasDatabaseCode(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (/^[0-9A-Z]{5}$/.test(code) || /^E[A-Z]+$/.test(code));
}

export interface SessionOptions {
  /** May create a PGlite directory (migrate); else a missing one is an error. */
  create?: boolean;
}

/** Opens the inbox, runs `use`, and closes the database whether it succeeded or not. */
export async function withInbox<R>(flags: Flags, options: SessionOptions, use: (session: InboxSession) => Promise<R>): Promise<R> {
  const target = targetFlag(flags, 'database');
  const names = tableNames(flags);
  const database = await openDatabase(target, { create: options.create === true, poolSize: 2 });
  let result: R;
  try {
    // No NOTIFY from the inbox itself: it would be sent after this process closed its pool.
    // Commands that make deliveries due call notifyWorkers() themselves, before closing.
    const ports = composeInbox({ database: database.client, table: names.display, notify: false });
    result = await use({ ...ports, database, names });
  } catch (error) {
    await database.close().catch(() => {});
    throw databaseFailure(error, target, names);
  }
  await database.close();
  return result;
}

/**
 * Wakes the workers of other processes (LISTEN on the inbox's channel) at once rather than at
 * their next poll. Best effort: a lost notification costs one poll interval, never a delivery.
 */
export async function notifyWorkers(session: InboxSession): Promise<void> {
  if (session.database.target.kind !== 'postgres') return; // PGlite: no other process can be listening
  await session.database.query("SELECT pg_notify($1, '')", [session.names.channel]).catch(() => {});
}
