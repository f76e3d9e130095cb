import { describeThrown } from '../shared/thrown.js';
import { WebhookError } from '../shared/webhook-error.js';

/** Why the inbox failed; see {@link WebhookInboxError}. */
export type WebhookInboxErrorCode =
  'inbox_unavailable' | 'inbox_not_migrated' | 'inbox_schema_newer' | 'inbox_failed' | 'inbox_no_transaction';

/**
 * The inbox could not do what was asked. `inbox_unavailable` (503): the database cannot be
 * reached, nothing was stored. `inbox_not_migrated` (500): the table is missing, run `migrate()`.
 * `inbox_schema_newer` (500): `migrate()` found the table migrated by a newer version of the
 * package; upgrade this one rather than run against a schema it does not know.
 * `inbox_failed` (500): the database refused a statement; `cause` holds its error.
 * `inbox_no_transaction` (500): a handler read `context.transaction` in a worker with
 * `mode: 'batched'`, which runs handlers outside any transaction.
 */
export class WebhookInboxError extends WebhookError {
  /** Always `'WebhookInboxError'`. */
  override readonly name = 'WebhookInboxError';
  /** Why the inbox failed; stable, for programs. */
  readonly code: WebhookInboxErrorCode;
  /** The HTTP status to answer with: 503 for `inbox_unavailable`, 500 otherwise. */
  readonly status: 500 | 503;

  constructor(code: WebhookInboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = code === 'inbox_unavailable' ? 503 : 500;
  }
}

/**
 * A statement that always returns a row came back without it: the client resolved it with an
 * answer that is not its own (postgres.js 3.4.9 shifted a result after a connection was cut
 * mid-reply, see postgres-js.ts). Nothing says what the statement did, so it is answered as a
 * connection lost under it (`code` is transient, src/inbox/store/outage/transient.ts): the
 * statement is tried again, and the store's keys make that safe. Never read as "stored" or "duplicate".
 */
export class MissingRowError extends Error {
  override readonly name = 'MissingRowError';
  readonly code = 'RESULT_ROW_MISSING';

  constructor(statement: string) {
    super(`the database client answered ${statement}, which always returns one row, with no row`);
  }
}

/**
 * A SQLSTATE is five digits or capitals, and none starts with E (PostgreSQL's classes: 00-58, F0,
 * HV, P0, XX); Node's socket errors all do: EPIPE (a guest's write to a PGlite owner that closed it)
 * is a lost connection, not a refused statement.
 */
function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-DF-Z][0-9A-Z]{4}$/.test(code) ? code : undefined;
}

const TRANSIENT = new Set(['25006', '57014', '40001', '40P01']);

/**
 * SQLSTATE classes that mean the connection, not the statement, failed. 08: connection exception;
 * 57P: operator intervention (terminated, shutting down); 53: resources (too many connections).
 * Transient too: a read-only standby after a failover (25006), a statement timeout (57014), a
 * serialization failure or deadlock (40001, 40P01): retrying later can succeed.
 */
const isConnectionState = (state: string) => /^(08|57P|53)/.test(state) || TRANSIENT.has(state);

/** Turns a client's error into a WebhookInboxError that says what to do. */
export function inboxError(error: unknown, table: string, doing: string): WebhookInboxError {
  if (error instanceof WebhookInboxError) return error;
  const state = sqlState(error);
  if (state === '42P01' || state === '3F000' || state === '42703') {
    return new WebhookInboxError(
      'inbox_not_migrated',
      `The inbox table ${table} is missing or out of date (${state}): run \`await inbox.migrate()\` once at start-up, ` +
        '`rack-webhooks inbox migrate --database <url>`, or apply sql/inbox.sql with your migration tool.',
      { cause: error },
    );
  }
  if (state === undefined || isConnectionState(state)) {
    return new WebhookInboxError('inbox_unavailable', `The inbox database could not be reached while ${doing}: ${describeThrown(error)}`, {
      cause: error,
    });
  }
  return new WebhookInboxError(
    'inbox_failed',
    `The inbox database refused a statement while ${doing} (SQLSTATE ${state}): ${describeThrown(error)}`,
    { cause: error },
  );
}
