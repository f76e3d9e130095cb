import type { Row, Statement } from './driver.js';
import { statementHash } from './statement-hash.js';

/** The part of a pg client this needs. */
interface PgSimpleClient {
  query(text: string): Promise<unknown>;
}

/**
 * What each connection has PREPAREd, shared by every inbox in this process: two inboxes on one
 * pool share its connections.
 */
const preparedOn = new WeakMap<object, Set<string>>();

/**
 * BEGIN and a transaction's first statement in one round trip, for node-postgres, which sends one
 * query at a time and waits for each: a worker's transaction (BEGIN, done-mark, handlers, COMMIT)
 * is then two round trips, not three. Measured on the worker bench: the claim-ahead loop drained
 * 1.3x faster with this than with a separate BEGIN.
 *
 * How: the statement is PREPAREd once per connection (SQL-level, so that it can run inside a
 * multi-statement simple query), then `BEGIN; EXECUTE name(literals)` is one simple query. The
 * parameters go as escaped literals, E'…' with backslashes and quotes doubled, which reads the
 * same whatever `standard_conforming_strings` says. Unplanned literal SQL (no PREPARE) measured
 * 15% slower: PostgreSQL then plans the statement on every delivery.
 *
 * A SQL-level prepared statement lives on the server connection: behind a pooler that moves a
 * session between server connections (PgBouncer in transaction mode), or after a handler's
 * `DEALLOCATE ALL`, EXECUTE finds no statement (SQLSTATE 26000). The transaction then rolls back
 * (nothing ran in it yet), and this driver stops using the fast path: BEGIN, then the statement
 * as an ordinary named query.
 */
export class OpeningSender {
  #usable: boolean;

  /** `prepare`: the inbox's `prepare` option; false (PgBouncer before 1.21) never PREPAREs. */
  constructor(prepare: boolean) {
    this.#usable = prepare;
  }

  /**
   * Opens the transaction on `client` with `opening` (or a bare BEGIN) and resolves with its rows.
   * `plain` runs a statement the ordinary way, once BEGIN is sent. On a rejection the caller rolls back.
   */
  async begin(client: PgSimpleClient, opening: Statement | undefined, plain: (statement: Statement) => Promise<Row[]>): Promise<Row[]> {
    if (opening === undefined || !this.#usable || !opening.params.every(plainAscii)) {
      await client.query('BEGIN');
      return opening === undefined ? [] : plain(opening);
    }
    const name = preparedName(opening.text);
    let prepared = preparedOn.get(client);
    if (prepared === undefined) preparedOn.set(client, (prepared = new Set()));
    if (!prepared.has(name)) {
      // 42P05: already there (another copy of this package on the same connection): the same text, so use it.
      await client.query(`PREPARE ${name} AS ${opening.text}`).catch((error: unknown) => {
        if ((error as { code?: unknown } | null)?.code !== '42P05') throw error;
      });
      prepared.add(name);
    }
    try {
      const results = (await client.query(`BEGIN; EXECUTE ${name}(${opening.params.map(literal).join(', ')})`)) as
        { rows: Row[] }[] | { rows: Row[] };
      // pg answers a multi-statement query with one result per statement; a client that gives only the last one, that.
      return (Array.isArray(results) ? results[results.length - 1] : results)?.rows ?? [];
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== '26000') throw error;
      // The connection no longer has it: roll back the empty transaction, then the plain way from now on.
      this.#usable = false;
      await client.query('ROLLBACK');
      await client.query('BEGIN');
      return plain(opening);
    }
  }
}

/** `rack_webhooks_open_` and a hash of the text: a plain identifier, under 63 bytes. */
function preparedName(text: string): string {
  return `rack_webhooks_open_${statementHash(text)}`;
}

/**
 * Only printable ASCII goes as a literal: under a client_encoding such as GBK or BIG5 the server
 * converts the query's bytes first, and the trailing byte of a multibyte character could swallow
 * an escaping backslash. Anything else (a workerId with other characters) takes the plain path.
 */
function plainAscii(value: unknown): boolean {
  return typeof value !== 'string' || /^[\x20-\x7e]*$/.test(value);
}

/** A parameter as a SQL literal: numbers as digits, everything else as an escaped string (typed by the PREPARE). */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  const text = String(value);
  if (text.includes('\0')) throw new TypeError('a statement parameter contains a NUL character, which PostgreSQL text cannot hold');
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}
