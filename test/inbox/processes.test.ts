// The inbox across real processes: receivers in two processes taking copies of one delivery, a
// worker killed with SIGKILL in the middle of its handlers, and a handler that kills its process.
// Every assertion is on rows in PostgreSQL. The children import the built package (npx tsup first).
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { createInbox } from '../../src/inbox.js';
import { createSignedRequestSync, createTestEvent } from '../../src/testing/index.js';
import { openDatabase, POSTGRES_URL, type TestDatabase } from './databases.js';
import { killAllChildren, killChild, startChild, waitFor, type Child, type Exit } from './fixtures/children.js';

const ACTION = 'app:budget:auto-shutdown:fired';
let db: TestDatabase<'pg'> | undefined;

afterEach(async () => {
  // Children first: they hold connections into the schema the close drops.
  await killAllChildren();
  await db?.close();
  db = undefined;
});

interface Setup {
  db: TestDatabase<'pg'>;
  secret: string;
  effects: string;
  /** What every child needs to reach this test's inbox. */
  env: Record<string, string>;
}

/** A fresh schema with the inbox migrated and an effects table with no unique key (so a duplicate effect shows). */
async function setUp(): Promise<Setup> {
  db = await openDatabase('pg');
  await createInbox({ database: db.database, table: db.table }).migrate();
  const effects = `${db.schema}.effects`;
  await db.query(
    `CREATE TABLE ${effects} (delivery_id bigint NOT NULL, worker text NOT NULL, written_at timestamptz NOT NULL DEFAULT now())`,
  );
  const secret = randomBytes(32).toString('hex');
  return { db, secret, effects, env: { RWT_DATABASE_URL: POSTGRES_URL, RWT_TABLE: db.table, RWT_SECRET: secret, RWT_EFFECTS: effects } };
}

async function count(database: TestDatabase, sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await database.query<{ n: string }>(sql, params);
  return Number(row?.n);
}

/** Stores `n` distinct deliveries through a receiver in this process; resolves with their ids. */
async function storeDeliveries(setup: Setup, n: number): Promise<string[]> {
  const receiver = createReceiver({ secrets: setup.secret, inbox: createInbox({ database: setup.db.database, table: setup.db.table }) });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const request = createSignedRequestSync(createTestEvent(ACTION), { secrets: setup.secret });
    const result = await receiver.receive({ body: request.body, headers: request.headers });
    expect(result.outcome).toBe('accepted');
    ids.push(result.id!);
  }
  return ids;
}

async function statesOf(database: TestDatabase): Promise<Record<string, number>> {
  const rows = await database.query<{ state: string; n: string }>(`SELECT state, count(*) AS n FROM ${database.table} GROUP BY state`);
  return Object.fromEntries(rows.map((row) => [row.state, Number(row.n)]));
}

function exitOf(child: Child): Exit | undefined {
  const { exitCode, signalCode } = child.process;
  return exitCode === null && signalCode === null ? undefined : { code: exitCode, signal: signalCode };
}

describe('inbox across processes', () => {
  it(
    'two receiver processes given 50 concurrent copies of one delivery store one row, and its handler runs once',
    { timeout: 30_000 },
    async () => {
      const setup = await setUp();
      // Both processes also run a worker: two workers in two processes race for the one row.
      const work = JSON.stringify({ concurrency: 4, pollIntervalMs: 50, leaseSeconds: 5 });
      const children = [0, 1].map(() =>
        startChild('serve.mjs', { ...setup.env, RWT_WORK: work, RWT_HANDLER: 'effect', RWT_HANDLER_MS: '50-50' }),
      );
      const ports = (await Promise.all(children.map((child) => child.message('port')))) as number[];

      const request = createSignedRequestSync(createTestEvent(ACTION), { secrets: setup.secret });
      // All 50 are sent before any answer is awaited: 25 to each process, on 50 connections.
      const answers = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const response = await fetch(`http://127.0.0.1:${ports[i % 2]}/webhooks`, {
            method: 'POST',
            headers: request.headers,
            body: request.body,
          });
          return { status: response.status, body: await response.text() };
        }),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(200));
      const bodies = answers.map((answer) => answer.body);
      expect(bodies.filter((body) => body === '{"status":"accepted"}')).toHaveLength(1);
      expect(bodies.filter((body) => body === '{"status":"duplicate"}')).toHaveLength(49);

      const rows = await setup.db.query<{ id: string }>(`SELECT id::text AS id FROM ${setup.db.table}`);
      expect(rows).toHaveLength(1);
      const id = rows[0]!.id;

      await waitFor(
        async () => (await statesOf(setup.db))['done'] === 1,
        10_000,
        () => `delivery ${id} to be done\n${children.map((child) => child.output()).join('\n')}`,
      );
      // Both workers claim again after it (each process stores one more delivery, which wakes its own
      // worker at once): a second run of the first would show up now.
      for (const port of ports) {
        const next = createSignedRequestSync(createTestEvent(ACTION), { secrets: setup.secret });
        const response = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers: next.headers, body: next.body });
        expect(response.status).toBe(200);
      }
      await waitFor(
        async () => (await statesOf(setup.db))['done'] === 3,
        10_000,
        () => `the two later deliveries to be done\n${children.map((child) => child.output()).join('\n')}`,
      );
      expect(await setup.db.query(`SELECT delivery_id::text AS delivery_id FROM ${setup.effects} WHERE delivery_id = $1`, [id])).toEqual([
        { delivery_id: id },
      ]);
      expect(await setup.db.query(`SELECT attempt, outcome FROM ${setup.db.table}_attempts WHERE delivery_id = $1`, [id])).toEqual([
        { attempt: 1, outcome: 'succeeded' },
      ]);
      expect(await statesOf(setup.db)).toEqual({ done: 3 });
      for (const child of children) expect(child.process.exitCode, child.output()).toBeNull();
    },
  );

  it(
    'a worker killed with SIGKILL mid-handler loses nothing: a new worker finishes every delivery, each effect exactly once',
    { timeout: 40_000 },
    async () => {
      const setup = await setUp();
      const ids = await storeDeliveries(setup, 40);
      const attempts = `${setup.db.table}_attempts`;

      const doomedConnections = `rwt-doomed-${randomBytes(6).toString('hex')}`;
      const doomed = startChild('work.mjs', {
        ...setup.env,
        RWT_APP_NAME: doomedConnections,
        RWT_WORK: JSON.stringify({ concurrency: 4, leaseSeconds: 2, pollIntervalMs: 50 }),
        RWT_HANDLER: 'effect',
        RWT_HANDLER_MS: '100-300',
      });
      const doomedId = await doomed.message('working');
      // Some effects committed, some deliveries not yet: the kill lands in the middle of the run.
      await waitFor(
        async () => {
          const states = await statesOf(setup.db);
          const written = await count(setup.db, `SELECT count(*) AS n FROM ${setup.effects}`);
          return (states['done'] ?? 0) >= 4 && written >= 4 && (states['pending'] ?? 0) + (states['running'] ?? 0) >= 10;
        },
        15_000,
        () => `the child worker to finish a few deliveries\n${doomed.output()}`,
        10,
      );
      const exit: Exit = await killChild(doomed);
      expect(exit.signal).toBe('SIGKILL');
      // A statement the child had sent still runs (and commits) after the child is gone: wait for
      // its backends to end, so what follows sees everything it did.
      await waitFor(
        async () =>
          (await count(setup.db, `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1`, [doomedConnections])) === 0,
        5_000,
        () => "the killed worker's connections to end",
      );

      // The attempts the kill cut short: counted at their claim (the row running, its attempts + 1),
      // never finished, so never written (an attempt is written with its outcome). None may be lost.
      const cutShort = (
        await setup.db.query<{ id: string; attempts: number }>(
          `SELECT id::text AS id, attempts FROM ${setup.db.table} WHERE state = 'running' ORDER BY id`,
        )
      ).map(({ id, attempts }) => ({ delivery_id: id, attempt: attempts }));
      expect(cutShort.length).toBeGreaterThanOrEqual(1);
      expect(await count(setup.db, `SELECT count(*) AS n FROM ${attempts} WHERE outcome IS NULL`)).toBe(0);
      const doneByChild = await count(setup.db, `SELECT count(*) AS n FROM ${setup.db.table} WHERE state = 'done'`);
      expect(doneByChild).toBeGreaterThanOrEqual(4);
      expect(doneByChild).toBeLessThan(40);

      // The new worker, in this process, with the same kind of handler.
      const inbox = createInbox({ database: setup.db.database, table: setup.db.table });
      const receiver = createReceiver({ secrets: setup.secret, inbox });
      receiver.onAny(async (_event, { delivery, transaction }) => {
        await transaction.query(`INSERT INTO ${setup.effects} (delivery_id, worker) VALUES ($1::bigint, 'parent')`, [delivery.id]);
      });
      const worker = inbox.work(receiver, { concurrency: 4, pollIntervalMs: 50, leaseSeconds: 5 });
      let states: Record<string, number> = {};
      try {
        await waitFor(
          async () => (states = await statesOf(setup.db))['done'] === 40,
          15_000,
          () => `every delivery to be done (now ${JSON.stringify(states)})`,
        );
      } finally {
        await worker.stop();
      }

      expect(await statesOf(setup.db)).toEqual({ done: 40 });
      // One effect per delivery: grouped, not guarded by a unique key that would hide a second one.
      const perDelivery = await setup.db.query<{ delivery_id: string; n: string }>(
        `SELECT delivery_id::text AS delivery_id, count(*) AS n FROM ${setup.effects} GROUP BY delivery_id`,
      );
      expect(perDelivery.map((row) => row.delivery_id).sort()).toEqual([...ids].sort());
      expect(perDelivery.filter((row) => row.n !== '1')).toEqual([]);
      // Both workers wrote effects: the kill really came mid-run.
      expect(await count(setup.db, `SELECT count(DISTINCT worker) AS n FROM ${setup.effects}`)).toBe(2);

      // Each attempt the kill cut short is recorded as crashed, and its delivery then succeeded once.
      // (On a slow machine a lease can also run out between the child's claim and its handler's
      // start; that attempt is crashed too, and still the child's.)
      const crashed = await setup.db.query<{ delivery_id: string; attempt: number; worker: string }>(
        `SELECT delivery_id::text AS delivery_id, attempt, worker FROM ${attempts} WHERE outcome = 'crashed' ORDER BY delivery_id`,
      );
      expect(crashed.map(({ delivery_id, attempt }) => ({ delivery_id, attempt }))).toEqual(expect.arrayContaining(cutShort));
      expect(new Set(crashed.map((row) => row.worker))).toEqual(new Set([doomedId]));
      expect(
        await count(setup.db, `SELECT count(*) AS n FROM ${attempts} WHERE outcome IS NULL OR outcome NOT IN ('succeeded', 'crashed')`),
      ).toBe(0);
      const succeeded = await setup.db.query<{ delivery_id: string; n: string }>(
        `SELECT delivery_id::text AS delivery_id, count(*) AS n FROM ${attempts} WHERE outcome = 'succeeded' GROUP BY delivery_id`,
      );
      expect(succeeded).toHaveLength(40);
      expect(succeeded.filter((row) => row.n !== '1')).toEqual([]);
    },
  );

  it(
    'drain() waits for a delivery whose worker was killed mid-handler: it resolves once the lease ran out and that delivery is done',
    { timeout: 40_000 },
    async () => {
      const setup = await setUp();
      const [id] = await storeDeliveries(setup, 1);
      const connections = `rwt-drain-${randomBytes(6).toString('hex')}`;
      const doomed = startChild('work.mjs', {
        ...setup.env,
        RWT_APP_NAME: connections,
        RWT_WORK: JSON.stringify({ leaseSeconds: 4, pollIntervalMs: 50 }),
        RWT_HANDLER: 'effect',
        RWT_HANDLER_MS: '60000-60000',
      });
      await doomed.message('working');
      // Its handler has begun: the transaction is open (the effect written, not committed), waiting.
      await waitFor(
        async () =>
          (await count(
            setup.db,
            `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle in transaction'`,
            [connections],
          )) === 1,
        15_000,
        () => `the child's handler to start\n${doomed.output()}`,
      );
      expect((await killChild(doomed)).signal).toBe('SIGKILL');
      await waitFor(
        async () => (await count(setup.db, `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1`, [connections])) === 0,
        5_000,
        () => "the killed worker's connections to end",
      );
      // Still running, its lease not run out: a drain that looked only at what is due would stop here.
      const [before] = await setup.db.query<{ state: string; lease_left: boolean }>(
        `SELECT state, locked_until > now() AS lease_left FROM ${setup.db.table} WHERE id = $1`,
        [id],
      );
      expect(before).toEqual({ state: 'running', lease_left: true });

      const inbox = createInbox({ database: setup.db.database, table: setup.db.table });
      const receiver = createReceiver({ secrets: setup.secret, inbox });
      receiver.onAny(async (_event, { delivery, transaction }) => {
        await transaction.query(`INSERT INTO ${setup.effects} (delivery_id, worker) VALUES ($1::bigint, 'parent')`, [delivery.id]);
      });
      const worker = inbox.work(receiver, { pollIntervalMs: 5_000, listen: false });
      const started = Date.now();
      try {
        await worker.drain();
      } finally {
        await worker.stop();
      }
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(await statesOf(setup.db)).toEqual({ done: 1 });
      expect(await setup.db.query(`SELECT worker FROM ${setup.effects}`)).toEqual([{ worker: 'parent' }]);
      expect(
        await setup.db.query(`SELECT attempt, outcome FROM ${setup.db.table}_attempts WHERE delivery_id = $1 ORDER BY attempt`, [id]),
      ).toEqual([
        { attempt: 1, outcome: 'crashed' },
        { attempt: 2, outcome: 'succeeded' },
      ]);
    },
  );

  it('drain() waits for a delivery another live worker is running, and leaves it to that worker', { timeout: 30_000 }, async () => {
    const setup = await setUp();
    const [id] = await storeDeliveries(setup, 1);
    const other = startChild('work.mjs', {
      ...setup.env,
      RWT_WORK: JSON.stringify({ leaseSeconds: 1, pollIntervalMs: 50 }), // a lease shorter than the handler: the row lock is what counts
      RWT_HANDLER: 'effect',
      RWT_HANDLER_MS: '2500-2500',
    });
    await other.message('working');
    await waitFor(
      async () => (await statesOf(setup.db))['running'] === 1,
      15_000,
      () => `the child to claim it\n${other.output()}`,
    );

    const inbox = createInbox({ database: setup.db.database, table: setup.db.table });
    const receiver = createReceiver({ secrets: setup.secret, inbox });
    receiver.onAny(async () => {
      throw new Error('the parent must not run it');
    });
    const worker = inbox.work(receiver, { pollIntervalMs: 200, listen: false });
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
    expect(await statesOf(setup.db)).toEqual({ done: 1 });
    expect(await setup.db.query(`SELECT worker FROM ${setup.effects}`)).toEqual([{ worker: `pid-${other.process.pid}` }]);
    expect(await setup.db.query(`SELECT attempt, outcome FROM ${setup.db.table}_attempts WHERE delivery_id = $1`, [id])).toEqual([
      { attempt: 1, outcome: 'succeeded' },
    ]);
  });

  it('a handler that kills its process ends dead after maxAttempts, each attempt recorded as crashed', { timeout: 30_000 }, async () => {
    const setup = await setUp();
    const [id] = await storeDeliveries(setup, 1);
    const work = JSON.stringify({ maxAttempts: 3, leaseSeconds: 1, pollIntervalMs: 50 });
    const spawned: Child[] = [];
    const exits: Exit[] = [];
    const state = async () =>
      (await setup.db.query<{ state: string }>(`SELECT state FROM ${setup.db.table} WHERE id = $1`, [id]))[0]?.state;
    // As a supervisor would: start a new worker each time the last one died, until the row is dead.
    while ((await state()) !== 'dead') {
      if (spawned.length === 6)
        throw new Error(`still ${await state()} after 6 workers\n${spawned.map((child) => child.output()).join('\n')}`);
      const child = startChild('work.mjs', { ...setup.env, RWT_WORK: work, RWT_HANDLER: 'suicide' });
      spawned.push(child);
      const outcome = await waitFor(
        async () => exitOf(child) ?? ((await state()) === 'dead' ? 'dead' : undefined),
        8_000,
        () => `worker ${spawned.length} to die or the delivery to be dead\n${child.output()}`,
      );
      if (outcome !== 'dead') exits.push(outcome);
    }
    await killAllChildren();

    // Three workers killed by their handler, then a fourth that found no attempt left.
    expect(exits).toEqual(Array(3).fill({ code: null, signal: 'SIGKILL' }));
    expect(spawned).toHaveLength(4);
    const [row] = await setup.db.query<{ state: string; attempts: number; last_error: string }>(
      `SELECT state, attempts, last_error FROM ${setup.db.table} WHERE id = $1`,
      [id],
    );
    expect(row).toMatchObject({ state: 'dead', attempts: 3 });
    expect(row!.last_error).toContain('attempt 3 did not finish');
    const log = await setup.db.query(`SELECT attempt, outcome FROM ${setup.db.table}_attempts WHERE delivery_id = $1 ORDER BY attempt`, [
      id,
    ]);
    expect(log).toEqual([1, 2, 3].map((attempt) => ({ attempt, outcome: 'crashed' })));
    expect(await count(setup.db, `SELECT count(*) AS n FROM ${setup.effects}`)).toBe(0);
  });
});
