import type { Row, Statement } from './driver.js';

/** A statement as pg takes it: a name (planned once per connection) or none, and its values as parameters. */
export interface PgQueryConfig {
  name?: string;
  text: string;
  values?: readonly unknown[];
}

/** The part of a pg client this needs. `pipeline` is pg's own mode (8.23 and later: a boolean; absent before). */
export interface PgPipelineClient {
  query(config: string | PgQueryConfig): Promise<{ rows: Row[] }>;
  pipeline?: boolean;
  /** pg's connection: its socket is corked around the two queries, when it has one that corks. */
  connection?: { stream?: { cork?: () => void; uncork?: () => void } };
}

/**
 * BEGIN and a transaction's first statement in one round trip, through node-postgres's own
 * pipeline mode (pg 8.23): both are written before the first answer comes back, the statement as
 * an ordinary query with its values as bind parameters. No SQL text is built from a value. A
 * worker's transaction (BEGIN, done-mark, handlers, COMMIT) is then two round trips, not three.
 *
 * pg reads its `pipeline` option at each query, so a client checked out of a pool (`exclusive`:
 * nobody else can queue a query on it meanwhile) is put in pipeline mode for these two queries
 * and back once both have answered: the handlers then get the client as the application made it.
 * A client that is already in pipeline mode (`new pg.Pool({ pipeline: true })`) pipelines as it is.
 * A shared `pg.Client`, or a pg before 8.23, sends BEGIN and waits, then the statement.
 *
 * BEGIN and the statement are separate queries (each ends with its own Sync), so the statement
 * would run outside the transaction if BEGIN alone failed. It cannot: BEGIN has no failure of its
 * own (inside a transaction it warns), and what does fail it (a broken connection, a transaction
 * already aborted) fails the statement written after it as well. On any rejection the caller rolls back.
 */
export async function beginWith(
  client: PgPipelineClient,
  opening: Statement | undefined,
  config: (statement: Statement) => PgQueryConfig,
  exclusive: boolean,
  commitFirst?: (committed: Promise<unknown>) => void,
): Promise<Row[]> {
  const alreadyPipelined = client.pipeline === true;
  const switchable = exclusive && client.pipeline === false;
  if (opening === undefined || !(alreadyPipelined || switchable)) {
    if (commitFirst !== undefined) {
      const committed = client.query('COMMIT');
      commitFirst(committed);
      // Its failure is the transaction before's: this one begins all the same.
      await committed.catch(() => {});
    }
    await client.query('BEGIN');
    return opening === undefined ? [] : (await client.query(config(opening))).rows;
  }
  const statement = config(opening);
  if (switchable) client.pipeline = true;
  let begun: PromiseSettledResult<unknown>, opened: PromiseSettledResult<{ rows: Row[] }>;
  try {
    [begun, opened] = await Promise.allSettled(
      writtenTogether(client, () => {
        // A COMMIT held for this write goes first (pg-lane.ts): with its own Sync, so its failure
        // ends only the transaction before, and BEGIN opens this one whatever it answered.
        if (commitFirst !== undefined) commitFirst(client.query('COMMIT'));
        return [client.query('BEGIN'), client.query(statement)];
      }),
    );
  } finally {
    // Both have answered (settled): nothing of ours is left in pg's pipeline when the mode goes back.
    if (switchable) client.pipeline = false;
  }
  if (begun.status === 'rejected') throw begun.reason;
  if (opened.status === 'rejected') throw opened.reason;
  return opened.value.rows;
}

/**
 * The two queries in one write to the socket, not two: pg writes a simple query (BEGIN) at once and
 * corks only its own extended-protocol messages, and on loopback each write is a system call that
 * showed as a third of a worker's time in profiles (bench/README.md). Pipelined queries are written
 * as they are queued (synchronously), so the cork is lifted in the same turn. A client without
 * pg's socket (a wrapper, pg-native) writes as it always did.
 */
function writtenTogether<T>(client: PgPipelineClient, queue: () => T): T {
  const stream = client.connection?.stream;
  if (typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return queue();
  stream.cork();
  try {
    return queue();
  } finally {
    stream.uncork();
  }
}
