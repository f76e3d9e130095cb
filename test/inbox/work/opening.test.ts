import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInbox } from '../../../src/inbox/create-inbox.js';
import { literal, OpeningSender } from '../../../src/inbox/database/pg-opening.js';
import { statementHash } from '../../../src/inbox/database/statement-hash.js';
import { POSTGRES_URL } from '../databases.js';
import { createReceiver } from '../../../src/receiver/create-receiver.js';
import { at, budgetEvent, createEffectsTable, inboxSuiteSetup, openInbox, SECRETS, writeEffect } from '../helpers.js';

/**
 * The default mode's transaction opens with its done-mark in the same round trip as BEGIN (pg:
 * a per-connection PREPARE, then `BEGIN; EXECUTE name(literals)`). What a user relies on: every
 * delivery is done once, its effects commit with the mark, whatever the worker id holds, and a
 * connection that lost its prepared statement (a pooler, `DEALLOCATE ALL`) still runs deliveries.
 */
inboxSuiteSetup();

const OPENING = `SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'rack_webhooks_open_%'`;

describe("the default mode's opening statement, on pg", () => {
  it('marks every delivery done once with its effect, PREPAREd once per connection', async () => {
    const harness = await openInbox('pg');
    const effects = await createEffectsTable(harness);
    const receiver = harness.receiver();
    const preparedSeen: number[] = [];
    receiver.on('app:budget:*', async (_event, { delivery, transaction }) => {
      preparedSeen.push((await (transaction as pg.PoolClient).query<{ n: number }>(OPENING)).rows[0]!.n);
      await writeEffect('pg', transaction, effects, delivery.id, delivery.attempt);
    });
    for (let i = 0; i < 30; i++) await harness.deliver(receiver, budgetEvent('app:budget:cap', at(`.${100 + i}`)));
    const worker = harness.work(receiver, { concurrency: 2 });
    await harness.settle();
    await worker.stop();
    expect(await harness.count(`state = 'done'`)).toBe(30);
    const [effect] = await harness.db.query<{ n: number; distinct_ids: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT delivery_id)::int AS distinct_ids FROM ${effects}`,
    );
    expect(effect).toEqual({ n: 30, distinct_ids: 30 });
    const [attempts] = await harness.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${harness.attemptsTable} WHERE outcome = 'succeeded' AND attempt = 1`,
    );
    expect(attempts!.n).toBe(30);
    // Each transaction was opened by the prepared mark, and each connection holds one such statement.
    expect(preparedSeen).toEqual(Array.from({ length: 30 }, () => 1));
  });

  it("a worker id with quotes, backslashes and spaces reaches the attempts exactly (the literal's escaping)", async () => {
    const harness = await openInbox('pg');
    const receiver = harness.receiver();
    receiver.on('app:budget:*', () => {});
    for (let i = 0; i < 3; i++) await harness.deliver(receiver, budgetEvent('app:budget:cap', at(`.${200 + i}`)));
    const workerId = `it's a \\ worker "x"`;
    const worker = harness.work(receiver, { workerId, concurrency: 1 });
    await harness.settle();
    await worker.stop();
    const rows = await harness.db.query<{ worker: string; outcome: string }>(`SELECT worker, outcome FROM ${harness.attemptsTable}`);
    expect(rows).toEqual(Array.from({ length: 3 }, () => ({ worker: workerId, outcome: 'succeeded' })));
  });

  it('a worker id beyond printable ASCII takes the plain path (no literal a client_encoding could misread), and reaches the attempts exactly', async () => {
    const harness = await openInbox('pg');
    const receiver = harness.receiver();
    const preparedSeen: number[] = [];
    receiver.on('app:budget:*', async (_event, { transaction }) => {
      preparedSeen.push((await (transaction as pg.PoolClient).query<{ n: number }>(OPENING)).rows[0]!.n);
    });
    for (let i = 0; i < 2; i++) await harness.deliver(receiver, budgetEvent('app:budget:cap', at(`.${250 + i}`)));
    const workerId = "wörker-中\\'";
    const worker = harness.work(receiver, { workerId, concurrency: 1 });
    await harness.settle();
    await worker.stop();
    const rows = await harness.db.query<{ worker: string; outcome: string }>(`SELECT worker, outcome FROM ${harness.attemptsTable}`);
    expect(rows).toEqual(Array.from({ length: 2 }, () => ({ worker: workerId, outcome: 'succeeded' })));
    expect(preparedSeen).toEqual([0, 0]);
  });

  it('a connection that lost the prepared opening (a pooler, a DEALLOCATE): the next deliveries still run once each, no failed attempt', async () => {
    const harness = await openInbox('pg');
    const receiver = harness.receiver();
    let runs = 0;
    receiver.on('app:budget:*', async (_event, { transaction }) => {
      runs++;
      const client = transaction as pg.PoolClient;
      const { rows } = await client.query<{ name: string }>(
        `SELECT name FROM pg_prepared_statements WHERE name LIKE 'rack_webhooks_open_%'`,
      );
      expect(rows.length).toBeLessThanOrEqual(1);
      for (const { name } of rows) await client.query(`DEALLOCATE ${name}`);
    });
    for (let i = 0; i < 6; i++) await harness.deliver(receiver, budgetEvent('app:budget:cap', at(`.${300 + i}`)));
    const worker = harness.work(receiver, { concurrency: 1 });
    await harness.settle();
    await worker.stop();
    expect(runs).toBe(6);
    expect(await harness.count(`state = 'done'`)).toBe(6);
    const [failed] = await harness.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${harness.attemptsTable} WHERE outcome IS DISTINCT FROM 'succeeded'`,
    );
    expect(failed!.n).toBe(0);
  });

  it('preparedStatements: false (PgBouncer before 1.21) never PREPAREs, and still marks every delivery done', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 });
    const harness = await openInbox('pg');
    try {
      const inbox = createInbox({ database: pool, table: harness.table, preparedStatements: false });
      const receiver = createReceiver({ secrets: SECRETS, inbox });
      receiver.on('app:budget:*', () => {});
      for (let i = 0; i < 4; i++) await harness.deliver(receiver, budgetEvent('app:budget:cap', at(`.${400 + i}`)));
      const worker = inbox.work(receiver, { concurrency: 1, pollIntervalMs: 20 });
      await harness.settle();
      await worker.stop();
      expect(await harness.count(`state = 'done'`)).toBe(4);
      const client = await pool.connect();
      try {
        expect((await client.query<{ n: number }>(OPENING)).rows[0]!.n).toBe(0);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });
});

describe('claimAhead, on a real database', () => {
  it('refuses a negative or fractional claimAhead, and claimAhead with batched mode, with a RangeError', async () => {
    const harness = await openInbox('pg');
    const receiver = harness.receiver();
    expect(() => harness.inbox.work(receiver, { claimAhead: -1 })).toThrow(
      new RangeError('claimAhead must be a whole number >= 0, got -1'),
    );
    expect(() => harness.inbox.work(receiver, { claimAhead: 1.5 })).toThrow(
      new RangeError('claimAhead must be a whole number >= 0, got 1.5'),
    );
    expect(() => harness.inbox.work(receiver, { mode: 'batched', claimAhead: 4 })).toThrow(
      new RangeError("claimAhead applies to the default mode only: mode 'batched' claims ahead by batchSize"),
    );
  });

  it('stop() with rows claimed ahead: they go back to pending with their attempt undone, and the next worker runs each once', async () => {
    const harness = await openInbox('pg');
    const receiver = harness.receiver();
    const handled: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.on('app:budget:*', async (_event, { delivery }) => {
      handled.push(delivery.id);
      if (handled.length === 1) await held;
    });
    for (let i = 0; i < 5; i++) await harness.deliver(receiver, budgetEvent('app:budget:cap', at(`.${500 + i}`)));
    const worker = harness.work(receiver, { concurrency: 1, claimAhead: 3, batchSize: 4 });
    const deadline = Date.now() + 10_000;
    while ((await harness.count(`state = 'running'`)) < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(await harness.count(`state = 'running'`)).toBe(4); // one handler running, three claimed ahead
    const stopping = worker.stop();
    await new Promise((r) => setTimeout(r, 50));
    release();
    await stopping;
    expect(handled).toHaveLength(1);
    expect(await harness.count(`state = 'pending' AND attempts = 0`)).toBe(4);
    const [attempts] = await harness.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${harness.attemptsTable}`);
    expect(attempts!.n).toBe(1);
    const next = harness.work(receiver, { concurrency: 2 });
    await harness.settle();
    await next.stop();
    expect(handled).toHaveLength(5);
    expect(new Set(handled).size).toBe(5);
  });
});

describe('literal(): a parameter as SQL text', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
  });

  it('PostgreSQL reads back any string without NUL exactly, whatever standard_conforming_strings says', async () => {
    for (const conforming of ['on', 'off']) {
      await client.query(`SET standard_conforming_strings = ${conforming}`);
      await fc.assert(
        fc.asyncProperty(
          fc.string({ unit: 'binary' }).filter((s) => !s.includes('\0')),
          async (value) => {
            const { rows } = await client.query<{ v: string }>(`SELECT ${literal(value)}::text AS v`);
            expect(rows[0]!.v).toBe(value);
          },
        ),
        { numRuns: 150 },
      );
    }
  });

  it('a connection where the statement is already PREPAREd (another copy of the package): used as it is', async () => {
    const text = 'SELECT $1::int + 1 AS n, $2::text AS who';
    await client.query(`PREPARE rack_webhooks_open_${statementHash(text)} AS ${text}`);
    const opened = await new OpeningSender(true).begin(client, { text, params: [41, "o'neil"] }, () => {
      throw new Error('the plain path was taken');
    });
    expect(opened).toEqual([{ n: 42, who: "o'neil" }]);
    await client.query('ROLLBACK');
  });

  it('numbers as digits, null as NULL, and a NUL character refused with a TypeError', () => {
    expect(literal(42)).toBe('42');
    expect(literal(null)).toBe('NULL');
    expect(literal('12')).toBe("E'12'");
    expect(() => literal('a\0b')).toThrow(TypeError);
  });
});
