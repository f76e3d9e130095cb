import type { Row, Statement } from './driver.js';

/** A statement as pg takes it: a name (planned once per connection) or none, and its values as parameters. */
export interface PgQueryConfig {
  name?: string;
  text: string;
  values?: readonly unknown[];
}

/** The part of a pg client this needs. `pipeline`: pg's own mode (8.23 and later), set where the client or its pool is made. */
export interface PgPipelineClient {
  query(config: string | PgQueryConfig): Promise<{ rows: Row[] }>;
  readonly pipeline?: boolean;
}

/** The COMMIT's own answer, from `COMMIT; BEGIN` sent as one simple query (pg answers such a query with one result each). */
const firstResult = (result: unknown): unknown => (Array.isArray(result) ? result[0] : result);

/**
 * BEGIN and a transaction's first statement, with a held COMMIT of the transaction before
 * (`commitFirst`, pg-lane.ts) ahead of them. On a client in pg's pipeline mode (`new pg.Pool({
 * pipeline: true })`, pg's public option) all three are written before the first answer comes back:
 * one round trip. Otherwise pg waits for each answer: `COMMIT; BEGIN` goes as one simple query (no
 * value in it), then the statement: two round trips. The statement's values are always bind
 * parameters; nothing of pg's is switched at run time.
 *
 * Pipelined, BEGIN and the statement are separate queries (each ends with its own Sync), so the
 * statement would run outside the transaction if BEGIN alone failed. It cannot: BEGIN has no
 * failure of its own (inside a transaction it warns), and what does fail it (a broken connection, a
 * transaction already aborted) fails the statement written after it as well. A held COMMIT has its
 * own Sync too: its failure ends only the transaction before, and BEGIN opens this one whatever it
 * answered. On any rejection the caller rolls back.
 */
export async function beginWith(
  client: PgPipelineClient,
  opening: Statement | undefined,
  config: (statement: Statement) => PgQueryConfig,
  commitFirst?: (committed: Promise<unknown>) => void,
): Promise<Row[]> {
  if (client.pipeline !== true || opening === undefined) {
    if (commitFirst === undefined) await client.query('BEGIN');
    else {
      // One round trip for both; a COMMIT that failed skipped the BEGIN after it, which then goes alone.
      const both = client.query('COMMIT; BEGIN');
      commitFirst(both.then(firstResult));
      const begun = await both.then(
        () => true,
        () => false,
      );
      if (!begun) await client.query('BEGIN');
    }
    return opening === undefined ? [] : (await client.query(config(opening))).rows;
  }
  if (commitFirst !== undefined) commitFirst(client.query('COMMIT'));
  const [begun, opened] = await Promise.allSettled([client.query('BEGIN'), client.query(config(opening))]);
  if (begun.status === 'rejected') throw begun.reason;
  if (opened.status === 'rejected') throw opened.reason;
  return opened.value.rows;
}
