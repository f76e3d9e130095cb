import { WebhookInboxError } from '../../../database/errors.js';

/**
 * Which failures of a store can pass if the receiver waits: the database restarting, a connection
 * cut, a failover, a statement timeout. Everything else (a missing table, a refused statement, bad
 * credentials, a client the application has ended) is final and answered at once.
 */

/** SQLSTATEs that a later attempt can get past. */
const TRANSIENT_STATES = new Set([
  '57P01', // admin_shutdown: the server is stopping, or pg_terminate_backend
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, shutting down, in recovery
  '57P05', // idle_session_timeout
  '25006', // read_only_sql_transaction: a standby after a failover, until the new primary is found
  '57014', // query_canceled: statement_timeout
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

/** Node's socket errors while connecting or on an open connection. */
const TRANSIENT_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
]);

/**
 * postgres.js: a connection closed under a query, a connect timeout. Not CONNECTION_ENDED nor
 * CONNECTION_DESTROYED: those answer queries after the application called `sql.end()`.
 * pg: CONNECTION_TIMEOUT (newer versions' connect timeout). Ours: RESULT_ROW_MISSING, a client's
 * answer without the row its statement always returns (MissingRowError): tried again.
 */
const TRANSIENT_CLIENT_CODES = new Set(['CONNECTION_CLOSED', 'CONNECT_TIMEOUT', 'CONNECTION_TIMEOUT', 'RESULT_ROW_MISSING']);

/**
 * pg reports lost connections by message only. Not "Connection terminated" alone (the application
 * ended the client), nor "… is not queryable" (a pg Client whose one connection is gone for good).
 */
const PG_TRANSIENT_MESSAGES: readonly [RegExp, string][] = [
  [/^Connection terminated unexpectedly$/, 'connection_terminated'],
  [/^Connection terminated due to connection timeout$/, 'connect_timeout'],
  // pg-pool: every connection busy for connectionTimeoutMillis. The database answers, the pool is
  // full: retried all the same (a 503 loses the delivery), through the same one-probe-at-a-time
  // circuit, so that waiting deliveries queue in order instead of adding to the pool's queue.
  [/^timeout exceeded when trying to connect$/, 'pool_timeout'],
  [/^timeout expired$/, 'connect_timeout'],
  [/^Query read timeout$/, 'query_timeout'],
];

function field(error: unknown, name: 'code' | 'message'): string | undefined {
  try {
    const value = (error as Record<string, unknown> | null)?.[name];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

function rawTransientCause(error: unknown, depth: number): string | undefined {
  if (depth > 3 || typeof error !== 'object' || error === null) return undefined;
  // Node's happy-eyeballs connect (localhost on IPv4 and IPv6) fails with one error per address.
  if (error instanceof AggregateError && error.errors.length > 0) {
    const causes = error.errors.map((inner) => rawTransientCause(inner, depth + 1));
    return causes.every((cause) => cause !== undefined) ? causes[0] : undefined;
  }
  const code = field(error, 'code');
  if (code !== undefined) {
    // Socket codes first: EPIPE has a SQLSTATE's shape.
    if (TRANSIENT_SOCKET_CODES.has(code) || TRANSIENT_CLIENT_CODES.has(code)) return code;
    if (/^[0-9A-Z]{5}$/.test(code)) return code.startsWith('08') || code.startsWith('53') || TRANSIENT_STATES.has(code) ? code : undefined;
  }
  const message = field(error, 'message');
  for (const [pattern, cause] of PG_TRANSIENT_MESSAGES) if (message !== undefined && pattern.test(message)) return cause;
  return undefined;
}

/**
 * The cause of a failed store when it can pass (a SQLSTATE, a socket error code, a client's code),
 * for the log; `undefined` when it is final.
 */
export function transientCause(error: unknown): string | undefined {
  if (error instanceof WebhookInboxError) {
    // inbox_not_migrated and inbox_failed are final whatever their cause.
    return error.code === 'inbox_unavailable' ? rawTransientCause(error.cause, 0) : undefined;
  }
  return rawTransientCause(error, 0);
}
