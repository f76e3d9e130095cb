import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { setUp } from '../../kit/setup.js';
import { createInbox } from '../../../src/inbox/create-inbox.js';
import { createReceiver } from '../../../src/receiver/create-receiver.js';
import { POSTGRES_URL } from '../databases.js';
import { at, budgetEvent, openInbox, SECRETS, type InboxHarness } from '../helpers.js';

/**
 * What a delivery's COMMIT decides, on pg, where a slot's COMMIT goes out with the next delivery's
 * BEGIN (pg-lane.ts) and where it goes alone (one pg.Client). A user relies on: a delivery is done
 * only if its handlers' writes committed; a COMMIT that fails, or that rolls back a transaction a
 * caught error had aborted, is a failed attempt, retried; the deliveries around it are untouched.
 */
setUp();

type Database = pg.Pool | pg.Client;

/** Six deliveries, the third one's first attempt sabotaged by `sabotage` inside its transaction; a worker drains them all. */
async function runSix(harness: InboxHarness, database: Database, sabotage: (client: pg.ClientBase) => Promise<void>) {
  const effects = `${harness.db.schema}.effects`;
  await harness.db.query(`CREATE TABLE ${effects} (delivery_id bigint NOT NULL, attempt integer NOT NULL, k integer NOT NULL,
    CONSTRAINT effects_k_unique UNIQUE (k) DEFERRABLE INITIALLY DEFERRED)`);
  const inbox = createInbox({ database, table: harness.table });
  const receiver = createReceiver({ secrets: SECRETS, inbox });
  const ids: string[] = [];
  receiver.on('app:budget:*', async (_event, { delivery, transaction }) => {
    const client = transaction as pg.ClientBase;
    await client.query(`INSERT INTO ${effects} VALUES ($1, $2, $3)`, [delivery.id, delivery.attempt, Number(delivery.id)]);
    if (delivery.id === ids[2] && delivery.attempt === 1) await sabotage(client);
  });
  for (let i = 0; i < 6; i++) {
    const result = await harness.deliver(receiver, budgetEvent('app:budget:cap', at(`.${700 + i}`)));
    ids.push(result.id!);
  }
  const worker = inbox.work(receiver, { concurrency: 1, pollIntervalMs: 20, backoff: { baseMs: 1, jitter: 'none' } });
  await harness.settle();
  await worker.stop();
  const attempts = await harness.db.query<{ delivery_id: string; attempt: number; outcome: string; error: string | null }>(
    `SELECT delivery_id::text, attempt, outcome, error FROM ${harness.attemptsTable} ORDER BY delivery_id, attempt`,
  );
  const written = await harness.db.query<{ delivery_id: string; attempt: number }>(
    `SELECT delivery_id::text, attempt FROM ${effects} ORDER BY delivery_id`,
  );
  return { ids, attempts, written };
}

function expectThirdRetried(result: Awaited<ReturnType<typeof runSix>>, error: string) {
  const { ids, attempts, written } = result;
  expect(attempts).toEqual(
    ids.flatMap((id, i) =>
      i === 2
        ? [
            { delivery_id: id, attempt: 1, outcome: 'failed', error: expect.stringContaining(error) },
            { delivery_id: id, attempt: 2, outcome: 'succeeded', error: null },
          ]
        : [{ delivery_id: id, attempt: 1, outcome: 'succeeded', error: null }],
    ),
  );
  // One effect per delivery: the failed attempt's writes rolled back with it, the retry's committed.
  expect(written).toEqual(ids.map((id, i) => ({ delivery_id: id, attempt: i === 2 ? 2 : 1 })));
}

const clients: [string, () => Promise<Database>][] = [
  [
    'a pg pool (COMMIT sent with the next BEGIN)',
    async () => new pg.Pool({ connectionString: POSTGRES_URL, max: 4, connectionTimeoutMillis: 5000 }),
  ],
  [
    'one pg.Client (COMMIT alone)',
    async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      return client;
    },
  ],
];

describe.each(clients)('a delivery whose COMMIT does not commit, on %s', (_name, open) => {
  it('a deferred constraint refused at COMMIT: that attempt failed with the error and retried; the others done once', async () => {
    const harness = await openInbox('pg');
    const database = await open();
    try {
      const result = await runSix(harness, database, async (client) => {
        await client.query(`INSERT INTO ${harness.db.schema}.effects VALUES (0, 0, 1)`);
      });
      expectThirdRetried(result, 'effects_k_unique');
      expect(await harness.count(`state = 'done'`)).toBe(6);
    } finally {
      await database.end();
    }
  });

  it('a statement that failed inside, its error caught by the handler: COMMIT rolls back, the attempt failed and retried', async () => {
    const harness = await openInbox('pg');
    const database = await open();
    try {
      const result = await runSix(harness, database, async (client) => {
        await client.query('SELECT 1 / 0').catch(() => {});
      });
      expectThirdRetried(result, 'the transaction was rolled back at COMMIT');
      expect(await harness.count(`state = 'done'`)).toBe(6);
    } finally {
      await database.end();
    }
  });
});

describe('a connection that dies in the middle of a slot’s run of deliveries, on a pg pool', () => {
  it('fails only the delivery it was running: the next ones take a new connection, and every connection is back after stop()', async () => {
    const harness = await openInbox('pg');
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4, connectionTimeoutMillis: 5000 });
    try {
      const inbox = createInbox({ database: pool, table: harness.table });
      const receiver = createReceiver({ secrets: SECRETS, inbox });
      const ids: string[] = [];
      receiver.on('app:budget:*', async (_event, { delivery, transaction }) => {
        if (delivery.id === ids[2]) await (transaction as pg.ClientBase).query('SELECT pg_terminate_backend(pg_backend_pid())');
      });
      for (let i = 0; i < 10; i++) ids.push((await harness.deliver(receiver, budgetEvent('app:budget:cap', at(`.${800 + i}`)))).id!);
      const worker = inbox.work(receiver, { concurrency: 1, pollIntervalMs: 20, maxAttempts: 1, backoff: { baseMs: 1, jitter: 'none' } });
      await harness.settle();
      await worker.stop();
      const states = await harness.db.query<{ id: string; state: string }>(
        `SELECT id::text AS id, state FROM ${harness.table} ORDER BY id::bigint`,
      );
      expect(states).toEqual(ids.map((id, i) => ({ id, state: i === 2 ? 'dead' : 'done' })));
      const attempts = await harness.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${harness.attemptsTable}`);
      expect(attempts[0]!.n).toBe(10);
      expect(pool.idleCount).toBe(pool.totalCount);
    } finally {
      await pool.end();
    }
  });
});
