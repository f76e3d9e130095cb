import type { Row, Statement } from './driver.js';
import { ExchangeError, OpeningExchange, type PgExchangeClient, type PgQueryConfig } from './pg-exchange.js';

export type { PgQueryConfig } from './pg-exchange.js';

/** The part of a pg client this needs. `pipeline`: pg's own mode (8.23 and later), set where the client or its pool is made. */
export interface PgPipelineClient {
  query(config: string | PgQueryConfig): Promise<{ rows: Row[] }>;
  readonly pipeline?: boolean;
}

/** The COMMIT's own answer, from `COMMIT; BEGIN` sent as one simple query (pg answers such a query with one result each). */
const firstResult = (result: unknown): unknown => (Array.isArray(result) ? result[0] : result);

/**
 * The named statements pg has parsed on each client through its own queries: the exchange only
 * binds those (pg-exchange.ts). A client's first opening of a name goes through pg's own query,
 * which parses it and keeps it parsed on that connection for as long as the connection lives.
 */
const parsedOn = new WeakMap<object, Set<string>>();

/** Values an exchange writes as pg does: text, numbers, booleans, null. Anything else goes through pg's own query, which knows its types. */
const plain = (value: unknown): boolean =>
  value === null || value === undefined || ['string', 'number', 'bigint', 'boolean'].includes(typeof value);

/** A real pg client not in pipeline mode (pg-native has no Submittable), with an opening it can send in one exchange. */
function exchangeable(client: PgPipelineClient, config: PgQueryConfig): client is PgPipelineClient & PgExchangeClient {
  return (
    client.pipeline !== true &&
    typeof (client as unknown as Partial<PgExchangeClient>).getTypeParser === 'function' &&
    !('native' in client) &&
    (config.name === undefined || parsedOn.get(client)?.has(config.name) === true) &&
    (config.values ?? []).every(plain)
  );
}

/**
 * BEGIN and a transaction's first statement, with a held COMMIT of the transaction before
 * (`commitFirst`, pg-lane.ts) ahead of them, in one round trip: on a client in pg's pipeline mode
 * (`new pg.Pool({ pipeline: true })`, pg's public option) as three queries written before the first
 * answer comes back; on any other pg client as one exchange of the extended protocol's messages
 * with one Sync (pg-exchange.ts, through pg's public Submittable). A client's first opening of a
 * named statement goes through pg's own query (`COMMIT; BEGIN` as one simple query, then the
 * statement: two round trips) so that pg parses it. The statement's values are always bind
 * parameters; nothing of pg's is switched at run time.
 *
 * Pipelined, BEGIN and the statement are separate queries (each ends with its own Sync), so the
 * statement would run outside the transaction if BEGIN alone failed. It cannot: BEGIN has no
 * failure of its own (inside a transaction it warns), and what does fail it (a broken connection, a
 * transaction already aborted) fails the statement written after it as well. A held COMMIT has its
 * own Sync too: its failure ends only the transaction before, and BEGIN opens this one whatever it
 * answered. In one exchange, a COMMIT that failed skipped the rest: BEGIN and the statement go
 * again, alone. On any rejection the caller rolls back.
 */
export async function beginWith(
  client: PgPipelineClient,
  opening: Statement | undefined,
  config: (statement: Statement) => PgQueryConfig,
  commitFirst?: (committed: Promise<unknown>) => void,
): Promise<Row[]> {
  const statement = opening === undefined ? undefined : config(opening);
  if (statement !== undefined && exchangeable(client, statement)) return exchange(client, statement, commitFirst);
  if (client.pipeline !== true || statement === undefined) {
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
    if (statement === undefined) return [];
    const { rows } = await client.query(statement);
    if (statement.name !== undefined) {
      const names = parsedOn.get(client) ?? new Set<string>();
      parsedOn.set(client, names.add(statement.name));
    }
    return rows;
  }
  if (commitFirst !== undefined) commitFirst(client.query('COMMIT'));
  const [begun, opened] = await Promise.allSettled([client.query('BEGIN'), client.query(statement)]);
  if (begun.status === 'rejected') throw begun.reason;
  if (opened.status === 'rejected') throw opened.reason;
  return opened.value.rows;
}

/** COMMIT, BEGIN and the statement in one exchange; BEGIN and the statement again, alone, after a COMMIT that failed. */
async function exchange(
  client: PgExchangeClient,
  statement: PgQueryConfig,
  commitFirst: ((committed: Promise<unknown>) => void) | undefined,
): Promise<Row[]> {
  const sent = new OpeningExchange(client, statement, commitFirst !== undefined);
  client.query(sent);
  commitFirst?.(
    sent.result.then(
      (result) => result.committed,
      (error: ExchangeError) => {
        if (error.committed !== undefined) return error.committed;
        throw error.reason;
      },
    ),
  );
  try {
    return (await sent.result).rows;
  } catch (error) {
    const failed = error as ExchangeError;
    if (commitFirst !== undefined && failed.committed === undefined) return exchange(client, statement, undefined);
    throw failed.reason;
  }
}
