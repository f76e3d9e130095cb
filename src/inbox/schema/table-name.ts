/**
 * The inbox's table name as the user gave it (`deliveries`, `ops.deliveries`), checked and quoted
 * once. Everything the schema creates is named after it, so two inboxes in one database never
 * share an index, a lock or a channel.
 */
import { quoteIdentifier } from '../../database/quote-identifier.js';

/** The inbox's table when `createInbox` is given none. */
export const DEFAULT_TABLE = 'rack_webhooks_inbox';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
// PostgreSQL truncates identifiers at 63 bytes; the longest derived name adds 12 characters.
const MAX_BARE_LENGTH = 63 - '_migrations'.length - 1;

export { quoteIdentifier };

/** The names of everything the schema of the inbox on `table` creates, checked and quoted. */
export type TableNames = Readonly<ReturnType<typeof resolveTableNames>>;

export function resolveTableNames(table: string | undefined = DEFAULT_TABLE) {
  if (typeof table !== 'string')
    throw new TypeError(`table must be a string such as "rack_webhooks_inbox" or "ops.deliveries", got ${typeof table}`);
  const parts = table.split('.');
  if (parts.length > 2 || parts.some((part) => !IDENTIFIER.test(part))) {
    throw new TypeError(
      `table must be a plain SQL identifier, optionally schema-qualified (letters, digits, _), got ${JSON.stringify(table)}`,
    );
  }
  const bare = parts[parts.length - 1]!;
  if (bare.length > MAX_BARE_LENGTH) throw new TypeError(`table name ${JSON.stringify(bare)} is longer than ${MAX_BARE_LENGTH} characters`);
  const schemaPrefix = parts.length === 2 ? `${quoteIdentifier(parts[0]!)}.` : '';
  return {
    /** As given, for messages. */
    display: table,
    /** The bare table name, for index and constraint names (which live in the table's schema). */
    bare,
    /** Quoted schema prefix (`"ops".`) or '' for search_path. */
    schemaPrefix,
    /** The deliveries table, quoted and schema-qualified when a schema was given. */
    deliveries: `${schemaPrefix}${quoteIdentifier(bare)}`,
    attempts: `${schemaPrefix}${quoteIdentifier(`${bare}_attempts`)}`,
    /**
     * The narrow queue beside the log (`<table>_queue`): one row per delivery that is not done, kept
     * by the deliveries table's triggers. The worker claims from it and the reads by state use it.
     */
    queue: `${schemaPrefix}${quoteIdentifier(`${bare}_queue`)}`,
    migrations: `${schemaPrefix}${quoteIdentifier(`${bare}_migrations`)}`,
    /** The workers' heartbeat table. */
    workers: `${schemaPrefix}${quoteIdentifier(`${bare}_workers`)}`,
    /** Refusals counted per minute and code. */
    refusals: `${schemaPrefix}${quoteIdentifier(`${bare}_refusals`)}`,
    /** The LISTEN/NOTIFY channel for new due deliveries. */
    channel: `${table.replace('.', '__')}_due`.slice(0, 63),
    /** Advisory lock key source for migrations. */
    lockKey: `rack-webhooks:inbox:${table}`,
  };
}

/**
 * The watcher's tables (`<table>_incidents`, `<table>_watch_lease`; `<table>_leases` is an index), derived here rather than kept in
 * {@link TableNames}, which every inbox statement carries.
 */
export function watchTables(names: TableNames): { readonly incidents: string; readonly leases: string } {
  return {
    incidents: `${names.schemaPrefix}${quoteIdentifier(`${names.bare}_incidents`)}`,
    leases: `${names.schemaPrefix}${quoteIdentifier(`${names.bare}_watch_lease`)}`,
  };
}

/** An index of the inbox's tables: the table's bare name and a suffix, quoted (an index lives in its table's schema). */
export const indexName = (names: TableNames, suffix: string): string => quoteIdentifier(`${names.bare}_${suffix}`);
