// mode: 'batched' across real processes: a worker killed with SIGKILL in the middle of a batch
// loses nothing (every attempt it claimed is recorded, and counted as crashed once its lease runs
// out), and two worker processes sharing a table never run one delivery twice. Every assertion is
// on rows in PostgreSQL. The children import the built package (npx tsup first).
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { createInbox } from '../../src/inbox.js';
import { createSignedRequestSync, createTestEvent } from '../../src/testing/index.js';
import { openDatabase, POSTGRES_URL, type TestDatabase } from './databases.js';
import { killAllChildren, killChild, startChild, waitFor } from './fixtures/children.js';

const ACTION = 'app:budget:auto-shutdown:fired';
let db: TestDatabase<'pg'> | undefined;

afterEach(async () => {
  await killAllChildren(); // first: they hold connections into the schema the close drops
  await db?.close();
  db = undefined;
});

async function setUp() {
  db = await openDatabase('pg');
  const inbox = createInbox({ database: db.database, table: db.table });
  await inbox.migrate();
  const effects = `${db.schema}.effects`;
  // No unique key: a second run of a delivery shows as a second row.
  await db.query(`CREATE TABLE ${effects} (delivery_id bigint NOT NULL, worker text NOT NULL)`);
  const secret = randomBytes(32).toString('hex');
  const receiver = createReceiver({ secrets: secret, inbox });
  const ids: string[] = [];
  const store = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const request = createSignedRequestSync(createTestEvent(ACTION), { secrets: secret });
      const result = await receiver.receive({ body: request.body, headers: request.headers });
      expect(result.outcome).toBe('accepted');
      ids.push(result.id!);
    }
  };
  const env = { RWT_DATABASE_URL: POSTGRES_URL, RWT_TABLE: db.table, RWT_SECRET: secret, RWT_EFFECTS: effects, RWT_HANDLER: 'outside' };
  return { db, inbox, secret, effects, ids, store, env, attempts: `${db.table}_attempts` };
}

async function count(database: TestDatabase, sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await database.query<{ n: string }>(sql, params);
  return Number(row?.n);
}

async function statesOf(database: TestDatabase): Promise<Record<string, number>> {
  const rows = await database.query<{ state: string; n: string }>(`SELECT state, count(*) AS n FROM ${database.table} GROUP BY state`);
  return Object.fromEntries(rows.map((row) => [row.state, Number(row.n)]));
}

describe("mode: 'batched' across processes", () => {
  it(
    'a worker killed mid-batch: every attempt it claimed is recorded, counted as crashed after its lease, and a new worker finishes every delivery',
    { timeout: 90_000 },
    async () => {
      const setup = await setUp();
      await setup.store(40);
      const doomedConnections = `rwt-doomed-${randomBytes(6).toString('hex')}`;
      const doomed = startChild('work.mjs', {
        ...setup.env,
        RWT_APP_NAME: doomedConnections,
        // One claim takes all 40; four run at a time, each for a while: the kill lands mid-batch.
        RWT_WORK: JSON.stringify({ mode: 'batched', concurrency: 4, batchSize: 40, leaseSeconds: 3, pollIntervalMs: 50 }),
        RWT_HANDLER_MS: '200-400',
      });
      await doomed.message('working', 30_000);
      await waitFor(
        async () => ((await statesOf(setup.db))['done'] ?? 0) >= 4,
        30_000,
        () => `the child worker to finish a few deliveries\n${doomed.output()}`,
        10,
      );
      expect((await killChild(doomed)).signal).toBe('SIGKILL');
      await waitFor(
        async () =>
          (await count(setup.db, `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1`, [doomedConnections])) === 0,
        10_000,
        () => "the killed worker's connections to end",
      );

      // What the kill left: rows claimed (running) each with its attempt counted, unwritten (an attempt is written with its outcome).
      const running = await setup.db.query<{ id: string; attempts: number }>(
        `SELECT id::text AS id, attempts FROM ${setup.db.table} WHERE state = 'running' ORDER BY id`,
      );
      expect(running.length).toBeGreaterThanOrEqual(10);
      const open = await setup.db.query(
        `SELECT delivery_id::text AS delivery_id, attempt FROM ${setup.attempts} WHERE delivery_id = ANY($1::bigint[]) AND attempt >= 1`,
        [running.map((row) => row.id)],
      );
      expect(open).toEqual([]);
      const doneByChild = await count(setup.db, `SELECT count(*) AS n FROM ${setup.db.table} WHERE state = 'done'`);

      // A new batched worker in this process takes them once their leases run out.
      const receiver = createReceiver({ secrets: setup.secret, inbox: setup.inbox });
      receiver.onAny(async (_event, { delivery }) => {
        await setup.db.query(`INSERT INTO ${setup.effects} (delivery_id, worker) VALUES ($1::bigint, 'parent')`, [delivery.id]);
      });
      const worker = setup.inbox.work(receiver, { mode: 'batched', concurrency: 4, pollIntervalMs: 50 });
      try {
        await worker.drain();
      } finally {
        await worker.stop();
      }
      expect(await statesOf(setup.db)).toEqual({ done: 40 });
      // Each attempt the kill cut short is crashed and its delivery then succeeded at the next attempt.
      const cutShort = await setup.db.query<{ delivery_id: string; attempt: number; outcome: string }>(
        `SELECT delivery_id::text AS delivery_id, attempt, outcome FROM ${setup.attempts} WHERE delivery_id = ANY($1::bigint[]) ORDER BY delivery_id, attempt`,
        [running.map((row) => row.id)],
      );
      expect(cutShort).toEqual(
        running.flatMap(({ id, attempts }) => [
          { delivery_id: id, attempt: attempts, outcome: 'crashed' },
          { delivery_id: id, attempt: attempts + 1, outcome: 'succeeded' },
        ]),
      );
      expect(await count(setup.db, `SELECT count(*) AS n FROM ${setup.effects} WHERE worker = 'parent'`)).toBe(40 - doneByChild);
      expect(
        await count(
          setup.db,
          `SELECT count(*) AS n FROM ${setup.attempts} WHERE outcome IS NULL OR outcome NOT IN ('succeeded', 'crashed')`,
        ),
      ).toBe(0);
    },
  );

  it('two worker processes sharing a table run each delivery exactly once', { timeout: 90_000 }, async () => {
    const setup = await setUp();
    const work = JSON.stringify({ mode: 'batched', concurrency: 8, batchSize: 20, pollIntervalMs: 50 });
    const children = [0, 1].map(() => startChild('work.mjs', { ...setup.env, RWT_WORK: work, RWT_HANDLER_MS: '0-5' }));
    await Promise.all(children.map((child) => child.message('working', 30_000)));
    await setup.store(300); // both are running already: they share the work as it arrives
    let states: Record<string, number> = {};
    await waitFor(
      async () => (states = await statesOf(setup.db))['done'] === 300,
      60_000,
      () => `every delivery to be done (now ${JSON.stringify(states)})\n${children.map((child) => child.output()).join('\n')}`,
    );
    const perDelivery = await setup.db.query<{ delivery_id: string; n: string }>(
      `SELECT delivery_id::text AS delivery_id, count(*)::text AS n FROM ${setup.effects} GROUP BY delivery_id`,
    );
    expect(perDelivery.map((row) => row.delivery_id).sort()).toEqual([...setup.ids].sort());
    expect(perDelivery.filter((row) => row.n !== '1')).toEqual([]);
    expect(await count(setup.db, `SELECT count(DISTINCT worker) AS n FROM ${setup.effects}`)).toBe(2);
    expect(await setup.db.query(`SELECT attempt, outcome, count(*)::int AS n FROM ${setup.attempts} GROUP BY 1, 2`)).toEqual([
      { attempt: 1, outcome: 'succeeded', n: 300 },
    ]);
    for (const child of children) expect(child.process.exitCode, child.output()).toBeNull();
  });
});
