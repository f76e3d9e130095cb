import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Statement } from '../../src/database/driver.js';
import { beginWith, type PgPipelineClient, type PgQueryConfig } from '../../src/database/pg-opening.js';
import { POSTGRES_URL } from './databases.js';

/**
 * On a pg client not in pipeline mode, a held COMMIT, BEGIN and the opening statement go as one
 * exchange (pg-exchange.ts): one round trip, the values bound. Checked on a real connection: what
 * committed, which transaction the opening ran in, and what each side was told when the COMMIT,
 * or the opening, failed.
 */
let client: pg.Client;
const asked = (): PgPipelineClient => client as unknown as PgPipelineClient;

beforeEach(async () => {
  client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  // A deferred foreign key fails at COMMIT, not at the insert.
  await client.query(
    'CREATE TEMP TABLE parent (id int PRIMARY KEY, ref int, CONSTRAINT ref_exists FOREIGN KEY (ref) REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)',
  );
});
afterEach(() => client.end());

const named = (statement: Statement): PgQueryConfig => ({
  name: 'opening_under_test',
  text: statement.text,
  values: [...statement.params],
});
const opening: Statement = { text: 'SELECT $1::int + 1 AS n, $2::text AS label, txid_current()::text AS tx', params: [41, "it's"] };

/** Opens a transaction with a held COMMIT ahead of it; resolves with the opening's rows and what the COMMIT came to. */
async function chained(statement: Statement = opening, config = named) {
  let committed!: Promise<unknown>;
  const opened = beginWith(asked(), statement, config, (commit) => (committed = commit.catch((error: unknown) => error)));
  const rows = await opened.catch((error: unknown) => error);
  return { rows, committed: await committed };
}

const currentTx = async () => (await client.query<{ tx: string }>('SELECT txid_current()::text AS tx')).rows[0]!.tx;

describe('one exchange: a held COMMIT, BEGIN and the opening statement on a pg client not in pipeline mode', () => {
  it('commits the transaction before and opens the next one with the statement, its values bound and its rows parsed', async () => {
    // The first opening of a name goes through pg's own query, which parses it.
    await beginWith(asked(), opening, named);
    await client.query('INSERT INTO parent VALUES (1, NULL)');
    const { rows, committed } = await chained();
    expect(committed).toMatchObject({ command: 'COMMIT' });
    expect(rows).toEqual([{ n: 42, label: "it's", tx: await currentTx() }]);
    await client.query('ROLLBACK');
    expect((await client.query('SELECT count(*)::int AS n FROM parent')).rows).toEqual([{ n: 1 }]);
    // Bound only after pg parsed it: the named statement exists once on the connection.
    expect((await client.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'opening_under_test'`)).rows).toEqual([
      { n: 1 },
    ]);
  });

  it('a COMMIT that failed rejects the transaction before; BEGIN and the statement then go again and open the next', async () => {
    await beginWith(asked(), opening, named);
    await client.query('INSERT INTO parent VALUES (1, 99)');
    const { rows, committed } = await chained();
    expect((committed as Error).message).toContain('ref_exists');
    expect(rows).toEqual([{ n: 42, label: "it's", tx: await currentTx() }]);
    await client.query('COMMIT');
    expect((await client.query('SELECT count(*)::int AS n FROM parent')).rows).toEqual([{ n: 0 }]);
  });

  it('a COMMIT of a transaction in which a statement failed answers ROLLBACK, and the next opens all the same', async () => {
    await beginWith(asked(), opening, named);
    await client.query('INSERT INTO parent VALUES (1, NULL)');
    await client.query('SELECT 1 / 0').catch(() => {});
    const { rows, committed } = await chained();
    expect(committed).toMatchObject({ command: 'ROLLBACK' });
    expect(rows).toEqual([{ n: 42, label: "it's", tx: await currentTx() }]);
    await client.query('COMMIT');
    expect((await client.query('SELECT count(*)::int AS n FROM parent')).rows).toEqual([{ n: 0 }]);
  });

  it('an opening that failed rejects after the COMMIT before it answered; the caller rolls back and the client goes on', async () => {
    await beginWith(asked(), opening, named);
    await client.query('INSERT INTO parent VALUES (1, NULL)');
    const failing: Statement = { text: 'SELECT 1 / $1::int AS n', params: [0] };
    const { rows, committed } = await chained(failing, (statement) => ({ text: statement.text, values: [...statement.params] }));
    expect((rows as Error).message).toContain('division by zero');
    expect(committed).toMatchObject({ command: 'COMMIT' });
    expect((await client.query('ROLLBACK')).command).toBe('ROLLBACK');
    expect((await client.query('SELECT count(*)::int AS n FROM parent')).rows).toEqual([{ n: 1 }]);
  });

  it('an unnamed statement (preparedStatements: false) goes in the exchange from the first, parsed with it', async () => {
    const unnamed = (statement: Statement): PgQueryConfig => ({ text: statement.text, values: [...statement.params] });
    await beginWith(asked(), opening, unnamed);
    const { rows, committed } = await chained(opening, unnamed);
    expect(committed).toMatchObject({ command: 'COMMIT' });
    expect(rows).toEqual([{ n: 42, label: "it's", tx: await currentTx() }]);
    await client.query('COMMIT');
    expect((await client.query('SELECT count(*)::int AS n FROM pg_prepared_statements')).rows).toEqual([{ n: 0 }]);
  });
});
