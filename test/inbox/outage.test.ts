// The inbox when its database is not there: a closed port answers 503 `inbox_unavailable` through
// every adapter once storeRetry.maxWaitMs has passed (short here), and logs it; connections terminated under a running worker (pg_terminate_backend)
// do not stop it for good. Real PostgreSQL, real HTTP, the worker in a real child process.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { createFetchHandler } from '../../src/adapters/web.js';
import { createReceiver, type Receiver, type ReceiverLogRecord } from '../../src/index.js';
import { createInbox, WebhookInboxError } from '../../src/inbox.js';
import { createSignedRequestSync, createTestEvent, toFetchRequest } from '../../src/testing/index.js';
import { adapters, type Running } from '../adapters/servers.js';
import { connectionRefusedUrl, openDatabase, pgPoolTo, POSTGRES_URL, type TestDatabase } from './databases.js';
import { killAllChildren, startChild, waitFor, type Child } from './fixtures/children.js';
import { sleep } from '../kit/time.js';

const ACTION = 'app:budget:auto-shutdown:fired';
const UNAVAILABLE = '{"error":"inbox_unavailable"}';
const WAIT_MS = 200;

const cleanups: (() => Promise<unknown>)[] = [];
const supervisorStops: (() => void)[] = [];
afterEach(async () => {
  // Supervisors first, so none starts a new worker for the ones killed next.
  for (const stop of supervisorStops.splice(0)) stop();
  await killAllChildren();
  // Last in, first out: servers before the clients they use, clients before the schema.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a database on a closed port', () => {
  const secret = randomBytes(32).toString('hex');

  // One client per kind, pointed at a port nothing listens on; both fail fast.
  const clients = {
    pg: async () => {
      const pool = pgPoolTo(await connectionRefusedUrl());
      cleanups.push(() => pool.end());
      return pool;
    },
    postgres: async () => {
      const sql = postgres(await connectionRefusedUrl(), { max: 2, connect_timeout: 2, onnotice: () => {} });
      cleanups.push(() => sql.end({ timeout: 1 }));
      return sql;
    },
  };

  async function receiverOn(kind: keyof typeof clients) {
    const records: ReceiverLogRecord[] = [];
    // A short bound: the delivery waits for the database this long, then 503.
    const inbox = createInbox({ database: await clients[kind](), table: 'rack_webhooks_inbox', storeRetry: { maxWaitMs: WAIT_MS } });
    const receiver = createReceiver({ secrets: secret, inbox, logger: (record) => records.push(record) });
    return { receiver, records };
  }

  const signedDelivery = () => createSignedRequestSync(createTestEvent(ACTION), { secrets: secret });

  function expectLoggedUnavailable(records: readonly ReceiverLogRecord[]) {
    expect(records).toContainEqual(
      expect.objectContaining({ level: 'error', event: 'inbox_unavailable', code: 'inbox_unavailable', action: ACTION }),
    );
    // The outage began (once) with the socket's code, and has not ended: the database never came.
    expect(records.filter((record) => record.event === 'inbox_outage')).toEqual([
      expect.objectContaining({ level: 'warn', code: 'ECONNREFUSED' }),
    ]);
    expect(records.filter((record) => record.event === 'inbox_outage_ended')).toEqual([]);
  }

  describe.each(Object.keys(clients) as (keyof typeof clients)[])('through %s', (kind) => {
    it(
      'receive() rejects with WebhookInboxError inbox_unavailable (503) once storeRetry.maxWaitMs has passed',
      { timeout: 10_000 },
      async () => {
        const { receiver, records } = await receiverOn(kind);
        const request = signedDelivery();
        const started = Date.now();
        const error: unknown = await receiver.receive({ body: request.body, headers: request.headers }).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error).toBeInstanceOf(WebhookInboxError);
        expect(error).toMatchObject({ code: 'inbox_unavailable', status: 503 });
        expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS - 10);
        expectLoggedUnavailable(records);
      },
    );

    it.each(Object.keys(adapters))('%s answers 503 {"error":"inbox_unavailable"}', { timeout: 10_000 }, async (adapter) => {
      const { receiver, records } = await receiverOn(kind);
      // The servers' factories take the receiver without an inbox's transaction type; same object.
      const server: Running = await adapters[adapter]!(receiver as unknown as Receiver);
      cleanups.push(() => server.close());
      const request = signedDelivery();
      const response = await fetch(server.url, { method: 'POST', headers: request.headers, body: request.body });
      expect(response.status).toBe(503);
      expect(await response.text()).toBe(UNAVAILABLE);
      expectLoggedUnavailable(records);
    });

    it('createFetchHandler called with a Request answers 503 {"error":"inbox_unavailable"}', { timeout: 10_000 }, async () => {
      const { receiver, records } = await receiverOn(kind);
      const response = await createFetchHandler(receiver)(toFetchRequest('https://example.test/webhooks', signedDelivery()));
      expect(response.status).toBe(503);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.text()).toBe(UNAVAILABLE);
      expectLoggedUnavailable(records);
    });
  });
});

describe('connections terminated under a worker process', () => {
  const count = async (db: TestDatabase, sql: string, params: unknown[] = []) => Number((await db.query<{ n: string }>(sql, params))[0]?.n);

  /** A fresh inbox, an effects table, and a way to store deliveries from this process (not the worker's). */
  async function setUp() {
    const db: TestDatabase<'pg'> = await openDatabase('pg');
    cleanups.push(() => db.close());
    await createInbox({ database: db.database, table: db.table }).migrate();
    const effects = `${db.schema}.effects`;
    // No unique key: a second effect for a delivery must show, not be refused.
    await db.query(`CREATE TABLE ${effects} (delivery_id bigint NOT NULL, worker text NOT NULL)`);
    const secret = randomBytes(32).toString('hex');
    const receiver = createReceiver({ secrets: secret, inbox: createInbox({ database: db.database, table: db.table }) });
    const store = async (n: number, gapMs: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const request = createSignedRequestSync(createTestEvent(ACTION), { secrets: secret });
        const result = await receiver.receive({ body: request.body, headers: request.headers });
        expect(result.outcome).toBe('accepted');
        ids.push(result.id!);
        await sleep(gapMs); // the pace of a rack, not a wait
      }
      return ids;
    };
    // Deliveries stored while the test does something else; settled before the test ends, whatever happens.
    const storing: Promise<string[]>[] = [];
    cleanups.push(() => Promise.allSettled(storing));
    const storeInBackground = (n: number, gapMs: number) => {
      const ids = store(n, gapMs);
      storing.push(ids);
      return ids;
    };
    // The worker's connections carry this name, so the test can find them and only them.
    const applicationName = `rwt-worker-${randomBytes(6).toString('hex')}`;
    const startWorker = (client: string, work: object, handlerMs: string) => () =>
      startChild('work.mjs', {
        RWT_DATABASE_URL: POSTGRES_URL,
        RWT_TABLE: db.table,
        RWT_SECRET: secret,
        RWT_EFFECTS: effects,
        RWT_CLIENT: client,
        RWT_APP_NAME: applicationName,
        RWT_HANDLER: 'effect',
        RWT_HANDLER_MS: handlerMs,
        RWT_WORK: JSON.stringify({ pollIntervalMs: 50, backoff: { baseMs: 50, maxMs: 200 }, ...work }),
      });
    return { db, effects, store, storeInBackground, applicationName, startWorker };
  }
  type Setup = Awaited<ReturnType<typeof setUp>>;

  interface Terminated {
    state: string;
    query: string;
  }

  /**
   * From another connection, ends every connection of the worker's process; with `midTransaction`,
   * only at a moment when one of them is inside a handler's transaction (so the cut lands
   * mid-handler, not between deliveries). Resolves with what was terminated, or undefined.
   */
  async function terminate({ db, applicationName }: Setup, midTransaction: boolean): Promise<Terminated[] | undefined> {
    const { rows } = await db.database.query<Terminated & { terminated: boolean }>(
      `WITH worker AS (
         SELECT pid, state, query FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1
       )
       SELECT pg_terminate_backend(pid) AS terminated, state, query FROM worker
        WHERE NOT $2 OR EXISTS (SELECT 1 FROM worker WHERE state = 'idle in transaction')`,
      [applicationName, midTransaction],
    );
    const terminated = rows.filter((row) => row.terminated);
    return terminated.length > 0 ? terminated : undefined;
  }

  /**
   * Keeps one worker process running. A death fails the test, except one that matches
   * `survivable`: then the death is recorded and a new process takes over (at most 5 times).
   */
  function supervise(start: () => Child, survivable: RegExp | undefined) {
    const deaths: string[] = [];
    let failure: Error | undefined;
    let stopped = false;
    supervisorStops.push(() => {
      stopped = true;
    });
    let current = start();
    const watch = (child: Child) =>
      void child.exited.then(() => {
        if (stopped) return;
        if (survivable === undefined || !survivable.test(child.output()) || deaths.length === 5) {
          failure = new Error(`the worker process died\n${child.output()}`);
          return;
        }
        deaths.push(child.output());
        current = start();
        watch(current);
      });
    watch(current);
    return {
      deaths,
      get current() {
        return current;
      },
      output: () => current.output(),
      /** Throws when the worker died in a way the test does not allow. */
      check() {
        if (failure !== undefined) throw failure;
      },
    };
  }
  type Supervisor = ReturnType<typeof supervise>;

  async function waitUntilAllDone({ db }: Setup, supervisor: Supervisor, ids: readonly string[], timeoutMs = 20_000) {
    let states: unknown;
    await waitFor(
      async () => {
        supervisor.check();
        states = await db.query(`SELECT state, count(*)::int AS n FROM ${db.table} GROUP BY state ORDER BY state`);
        return (
          (await count(db, `SELECT count(*) AS n FROM ${db.table} WHERE state = 'done' AND id = ANY($1::bigint[])`, [ids])) === ids.length
        );
      },
      timeoutMs,
      () => `every delivery to be done (now ${JSON.stringify(states)})\n${supervisor.output()}`,
    );
  }

  async function expectEachEffectOnce({ db, effects }: Setup, ids: readonly string[]) {
    const perDelivery = await db.query<{ delivery_id: string; n: string }>(
      `SELECT delivery_id::text AS delivery_id, count(*) AS n FROM ${effects} GROUP BY delivery_id`,
    );
    expect(perDelivery.map((row) => row.delivery_id).sort()).toEqual([...ids].sort());
    expect(perDelivery.filter((row) => row.n !== '1')).toEqual([]);
    // Every attempt is on record with how it ended; none is left open.
    expect(await count(db, `SELECT count(*) AS n FROM ${db.table}_attempts WHERE outcome IS NULL`)).toBe(0);
  }

  function expectStillRunning(supervisor: Supervisor) {
    expect(supervisor.deaths).toEqual([]);
    expect(supervisor.current.process.exitCode, supervisor.output()).toBeNull();
    expect(supervisor.current.process.signalCode, supervisor.output()).toBeNull();
  }

  /** NOTIFY wake-ups came back, not only polling: the worker LISTENs again under its own name. */
  async function expectListeningAgain({ db, applicationName }: Setup, supervisor: Supervisor) {
    await waitFor(
      async () =>
        (await count(db, `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'listen %'`, [
          applicationName,
        ])) === 1,
      5_000,
      () => `the worker to LISTEN again\n${supervisor.output()}`,
    );
  }

  /**
   * postgres.js 3.4.9 ends the process when a connection inside sql.begin() is terminated: its
   * COMMIT or ROLLBACK is written through a setImmediate after the socket was set to null
   * (porsager/postgres#1154, #1208; unfixed in 3.4.9). No caller can catch it. The inbox's part is
   * that a new process loses nothing and runs nothing twice, so that death (and only that one) is
   * survived by starting a new worker process, as a supervisor would.
   */
  const POSTGRES_JS_NEXT_WRITE_CRASH =
    /TypeError: Cannot read properties of null \(reading 'write'\)\s+at Immediate\.nextWrite \([^)]*postgres\/src\/connection\.js/;

  it.each([
    { client: 'pg', survivable: undefined },
    { client: 'postgres', survivable: POSTGRES_JS_NEXT_WRITE_CRASH },
  ])(
    'mid-run on $client: deliveries stored after the cut are processed, each effect once',
    { timeout: 40_000 },
    async ({ client, survivable }) => {
      const setup = await setUp();
      const supervisor = supervise(setup.startWorker(client, { concurrency: 4, leaseSeconds: 2 }, '20-40'), survivable);
      await supervisor.current.message('working');
      const cut = (what: string) =>
        waitFor(
          () => (supervisor.check(), terminate(setup, true)),
          10_000,
          () => `a moment to cut the worker's connections ${what}\n${supervisor.output()}`,
          5,
        );

      const before = setup.storeInBackground(15, 5);
      const first = await cut('while the first deliveries run');
      // Its LISTEN connection and a handler's transaction were among them.
      expect(
        first.some((row) => row.state === 'idle in transaction'),
        JSON.stringify(first),
      ).toBe(true);
      expect(
        first.some((row) => /^listen /i.test(row.query)),
        JSON.stringify(first),
      ).toBe(true);
      const after = setup.storeInBackground(15, 10);
      // And once more, while deliveries stored after the first cut are being worked on.
      await cut('a second time');
      const all = [...(await before), ...(await after), ...(await setup.store(5, 0))];

      await waitUntilAllDone(setup, supervisor, all);
      if (survivable === undefined) expectStillRunning(supervisor);
      await expectEachEffectOnce(setup, all);
      // The cut attempts are on record: failed, or crashed when the process went.
      expect(
        await count(setup.db, `SELECT count(*) AS n FROM ${setup.db.table}_attempts WHERE outcome IN ('failed', 'crashed')`),
      ).toBeGreaterThanOrEqual(1);
      await expectListeningAgain(setup, supervisor);
    },
  );

  it.each(['pg', 'postgres'])(
    'while idle on %s: the worker process stays up and processes what is stored next',
    { timeout: 20_000 },
    async (client) => {
      const setup = await setUp();
      const supervisor = supervise(setup.startWorker(client, { concurrency: 2, leaseSeconds: 2 }, '0-0'), undefined);
      await supervisor.current.message('working');
      await expectListeningAgain(setup, supervisor); // listening the first time
      // Nothing running: every connection it has is idle, its LISTEN connection included.
      const cut = await terminate(setup, false);
      expect(cut?.length, JSON.stringify(cut)).toBeGreaterThanOrEqual(1);
      // A worker-only process with no connection left must not just end (exit code 0 is no crash,
      // and no supervisor restarts it): it still runs what is stored next, and is still up after.
      supervisor.check();
      const ids = await setup.store(3, 0);
      await waitUntilAllDone(setup, supervisor, ids, 10_000);
      expectStillRunning(supervisor);
      await expectEachEffectOnce(setup, ids);
      await expectListeningAgain(setup, supervisor);
    },
  );

  it(
    'in a storm on pg (every connection cut every few ms for 3 s): the process stays up, each effect once',
    { timeout: 60_000 },
    async () => {
      const setup = await setUp();
      // Attempts cut short count against maxAttempts: a budget no storm here can use up.
      const supervisor = supervise(setup.startWorker('pg', { concurrency: 4, leaseSeconds: 1, maxAttempts: 1000 }, '5-15'), undefined);
      await supervisor.current.message('working');
      const ids: string[] = [];
      let cuts = 0;
      // New connections are cut too, some while they start up: pg hands a new client over in the
      // same turn as its first ReadyForQuery, and a FATAL read with it must find a listener.
      // At least 3 s and at least 50 cuts: on a loaded machine 3 s alone gave 47 (bounded at 20 s).
      const stormEnds = Date.now() + 3000;
      const giveUp = Date.now() + 20_000;
      while ((Date.now() < stormEnds || cuts < 50) && Date.now() < giveUp) {
        supervisor.check();
        ids.push(...(await setup.store(1, 0)));
        cuts += (await terminate(setup, false))?.length ?? 0;
        await sleep(10); // the storm's pace
      }
      expect(cuts).toBeGreaterThanOrEqual(50);
      await waitUntilAllDone(setup, supervisor, ids);
      expectStillRunning(supervisor);
      await expectEachEffectOnce(setup, ids);
      await expectListeningAgain(setup, supervisor);
    },
  );
});
