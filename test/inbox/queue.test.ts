/**
 * The queue beside the log (migration 10): `<table>_queue` holds, for every delivery that is not
 * done, copies of the columns that find work, kept by the log's triggers; and none of the log's
 * indexes reads a column the worker writes, so its updates of a row are HOT.
 */
import fc from 'fast-check';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { setUp } from '../kit/setup.js';
import { MIGRATIONS, migrationsTableSql } from '../../src/inbox/schema/migrations.js';
import { resolveTableNames } from '../../src/inbox/schema/table-name.js';
import { workerSql } from '../../src/inbox/work/sql.js';
import { pgPoolTo } from './databases.js';
import { at, budgetEvent, openInbox, type InboxHarness } from './helpers.js';
import { until } from '../kit/time.js';

setUp();

/** The columns the worker, retry, replay and recovery write on a log row. */
const WRITTEN = ['state', 'attempts', 'attempt_base', 'run_at', 'locked_until', 'locked_by', 'last_error', 'done_at', 'replayed_at'];
const STATES = ['pending', 'running', 'done', 'dead', 'ignored', 'duplicate'] as const;

/** The queue must equal the log's rows that are not done, column for column (run_at only while pending). */
async function expectQueueMatchesLog(harness: InboxHarness): Promise<void> {
  const columns = 'id::text AS id, state, event_ns::text AS event_ns, app, locked_until';
  // The queue's run_at: the log's while pending, NULL in every other state.
  const log = await harness.db.query(
    `SELECT ${columns}, CASE WHEN state = 'pending' THEN run_at END AS run_at FROM ${harness.table} WHERE state <> 'done' ORDER BY id`,
  );
  const queue = await harness.db.query(`SELECT ${columns}, run_at FROM ${harness.table}_queue ORDER BY id`);
  expect(queue).toEqual(log);
}

async function deliverMany(harness: InboxHarness, count: number, app = 'billing-api'): Promise<void> {
  const receiver = harness.receiver();
  for (let index = 0; index < count; index++) {
    const result = await harness.deliver(
      receiver,
      budgetEvent('app:budget:cap', at(`.${String(index).padStart(3, '0')}`), { app, tick_id: `tick-${app}-${index}` }),
    );
    expect(result.outcome).toBe('accepted');
  }
}

/** Delivers `count` and runs them to the end with a batched worker (done, one attempt each), which then stops. */
async function deliverAndRun(harness: InboxHarness, count: number, app?: string): Promise<void> {
  await deliverMany(harness, count, app);
  const receiver = harness.receiver();
  receiver.on('app:budget:cap', () => {});
  const worker = harness.work(receiver, { concurrency: 1, mode: 'batched' });
  await worker.drain();
  await worker.stop();
}

describe.each(['pg', 'pglite'] as const)('the queue beside the log (%s)', (kind) => {
  it('follows every way a row changes: store, claim, done, failure, dead, retry, replay, prune, and SQL by hand', async () => {
    const harness = await openInbox(kind);
    await deliverMany(harness, 6);
    await deliverMany(harness, 2, 'web');
    await expectQueueMatchesLog(harness);
    expect(await harness.count()).toBe(8);

    // The worker: web's deliveries fail (one attempt: dead), billing-api's are done.
    const receiver = harness.receiver();
    receiver.on('app:budget:cap', (event) => {
      if ((event.data as { app?: string }).app === 'web') throw new Error('web is down');
    });
    const worker = harness.work(receiver, { maxAttempts: 1 });
    await worker.drain();
    await worker.stop();
    expect(await harness.count(`state = 'dead'`)).toBe(2);
    expect(await harness.count(`state = 'done'`)).toBe(6);
    await expectQueueMatchesLog(harness);
    expect((await harness.db.query(`SELECT state FROM ${harness.table}_queue`)).map((row) => row['state'])).toEqual(['dead', 'dead']);

    // Retry (dead to pending), replay (done to pending): both back in the queue.
    expect(await harness.inbox.retry({ state: 'dead' })).toBe(2);
    expect(await harness.inbox.replay({ app: 'billing-api' })).toBe(6);
    await expectQueueMatchesLog(harness);

    // What a person does in psql: a state by hand, a lease, a delete, then a truncate.
    const [first] = await harness.db.query<{ id: string }>(`SELECT id::text AS id FROM ${harness.table} ORDER BY id LIMIT 1`);
    await harness.db.query(
      `UPDATE ${harness.table} SET state = 'running', locked_by = 'by-hand', locked_until = now() + interval '1 minute' WHERE id = $1::bigint`,
      [first!.id],
    );
    await expectQueueMatchesLog(harness);
    await harness.db.query(`DELETE FROM ${harness.table} WHERE id = $1::bigint`, [first!.id]);
    await expectQueueMatchesLog(harness);
    // A done row to prune: one of the replayed ones, by hand.
    await harness.db.query(`UPDATE ${harness.table} SET state = 'done' WHERE id = (SELECT max(id) FROM ${harness.table})`);
    expect(await harness.inbox.prune({ before: new Date(Date.now() + 60_000) })).toBeGreaterThan(0);
    await expectQueueMatchesLog(harness);
    await harness.db.query(`TRUNCATE ${harness.table} CASCADE`);
    expect(await harness.db.query(`SELECT id FROM ${harness.table}_queue`)).toEqual([]);
  });

  it('drops the old id of a delivery renumbered by hand, so a worker claiming one at a time still finds the work (migration 12)', async () => {
    const harness = await openInbox(kind);
    await deliverMany(harness, 3);
    // The oldest delivery, never attempted (no attempt row points at it), gets a new id by hand.
    const [oldest] = await harness.db.query<{ id: string }>(`SELECT id::text AS id FROM ${harness.table} ORDER BY event_ns LIMIT 1`);
    const [renumbered] = await harness.db.query<{ id: string }>(
      `UPDATE ${harness.table} SET id = DEFAULT WHERE id = $1::bigint RETURNING id::text AS id`,
      [oldest!.id],
    );
    expect(renumbered!.id).not.toBe(oldest!.id);
    await expectQueueMatchesLog(harness);
    expect(await harness.db.query(`SELECT id FROM ${harness.table}_queue WHERE id = $1::bigint`, [oldest!.id])).toEqual([]);

    // An update that does not set id leaves the trigger alone and the queue right.
    await harness.db.query(`UPDATE ${harness.table} SET last_error = 'by hand' WHERE id = $1::bigint`, [renumbered!.id]);
    await expectQueueMatchesLog(harness);

    // Before the trigger, the old id stayed due at the head of the queue: a claim of one took it, matched no
    // delivery and returned nothing, so a worker with batchSize 1 saw an empty queue and drain() never ended.
    const receiver = harness.receiver();
    const handled: string[] = [];
    receiver.on('app:budget:cap', (_event, { delivery }) => void handled.push(delivery.id));
    const worker = harness.work(receiver, { concurrency: 1, batchSize: 1, claimAhead: 0 });
    await worker.drain();
    await worker.stop();
    expect(handled).toHaveLength(3);
    expect(handled).toContain(renumbered!.id);
    expect(await harness.count(`state = 'done'`)).toBe(3);
    expect(await harness.db.query(`SELECT id FROM ${harness.table}_queue`)).toEqual([]);
  });

  it("keeps each delivery's attempts with it, with no foreign key to check on every claim (migration 13)", async () => {
    const harness = await openInbox(kind);
    await deliverAndRun(harness, 3);
    const attempts = `${harness.table}_attempts`;
    const attemptIds = async () =>
      (await harness.db.query<{ id: string }>(`SELECT delivery_id::text AS id FROM ${attempts} ORDER BY delivery_id`)).map((row) => row.id);
    const ids = (await harness.db.query<{ id: string }>(`SELECT id::text AS id FROM ${harness.table} ORDER BY id`)).map((row) => row.id);
    expect(await attemptIds()).toEqual(ids);
    expect(await harness.db.query(`SELECT conname FROM pg_constraint WHERE contype = 'f' AND conrelid = '${attempts}'::regclass`)).toEqual(
      [],
    );

    // What the key refused, the renumber trigger refuses: a delivery with attempts keeps its id.
    await expect(harness.db.query(`UPDATE ${harness.table} SET id = DEFAULT WHERE id = $1::bigint`, [ids[0]])).rejects.toMatchObject({
      code: '23503',
    });
    expect(await attemptIds()).toEqual(ids);

    // What the key's ON DELETE CASCADE did, the delete trigger does, for a delete by hand too.
    await harness.db.query(`DELETE FROM ${harness.table} WHERE id = $1::bigint`, [ids[0]]);
    expect(await attemptIds()).toEqual(ids.slice(1));
    // And TRUNCATE of the log alone (the key made it fail without CASCADE) empties both.
    await harness.db.query(`TRUNCATE ${harness.table}`);
    expect(await attemptIds()).toEqual([]);
    expect(await harness.db.query(`SELECT id FROM ${harness.table}_queue`)).toEqual([]);

    // Every way to name the tables: a table the statement emptied is not truncated again (refused
    // inside that statement), one it did not name is; none is left with rows.
    const variants = [
      harness.table,
      `${harness.table}, ${attempts}, ${harness.table}_queue`,
      `${harness.table}, ${harness.table}_queue`,
      `${harness.table}, ${attempts}`,
      `${harness.table} CASCADE`,
      `${harness.table}_queue, ${attempts}, ${harness.table} RESTART IDENTITY`,
    ];
    for (const [index, tables] of variants.entries()) {
      await deliverAndRun(harness, 2, `app-${index}`);
      // One row not done, so that the queue has rows too.
      await harness.db.query(`UPDATE ${harness.table} SET state = 'dead' WHERE id = (SELECT max(id) FROM ${harness.table})`);
      expect(await attemptIds()).toHaveLength(2);
      await harness.db.query(`TRUNCATE ${tables}`);
      expect([await attemptIds(), await harness.count('true'), await harness.db.query(`SELECT id FROM ${harness.table}_queue`)]).toEqual([
        [],
        0,
        [],
      ]);
    }
  });

  it('is the log without its done rows after any sequence of updates and deletes (property)', async () => {
    const harness = await openInbox(kind);
    await deliverMany(harness, 8);
    const ids = (await harness.db.query<{ id: string }>(`SELECT id::text AS id FROM ${harness.table} ORDER BY id`)).map((row) => row.id);
    const change = fc.record({
      rows: fc.subarray(ids, { minLength: 0, maxLength: ids.length }),
      state: fc.constantFrom(...STATES),
      runAt: fc.option(fc.integer({ min: -3600, max: 3600 }), { nil: undefined }),
      remove: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 6 }), async (changes) => {
        for (const { rows, state, runAt, remove } of changes) {
          const list = rows.length === 0 ? 'NULL' : rows.join(', ');
          if (remove && state === 'done') await harness.db.query(`DELETE FROM ${harness.table} WHERE id IN (${list})`);
          else {
            const due = runAt === undefined ? 'NULL' : `now() + make_interval(secs => ${runAt})`;
            const lease = state === 'running' ? `now() + interval '30 seconds'` : 'NULL';
            // duplicate_of and event_key are left alone: a state by hand does not need them.
            await harness.db.query(
              `UPDATE ${harness.table} SET state = '${state}', run_at = ${due}, locked_until = ${lease} WHERE id IN (${list})`,
            );
          }
          await expectQueueMatchesLog(harness);
        }
      }),
      { numRuns: kind === 'pg' ? 25 : 10 },
    );
  });
});

/** `n` connections of their own (a pool of the test's), given back and the pool ended whatever `use` does. */
async function withClients<N extends 1 | 2>(
  n: N,
  use: (clients: N extends 1 ? [pg.PoolClient] : [pg.PoolClient, pg.PoolClient]) => Promise<void>,
): Promise<void> {
  const pool = pgPoolTo();
  const clients: pg.PoolClient[] = [];
  try {
    for (let i = 0; i < n; i++) clients.push(await pool.connect());
    await use(clients as Parameters<typeof use>[0]);
  } finally {
    for (const client of clients) client.release();
    await pool.end();
  }
}

describe('the log on PostgreSQL', () => {
  it('migration 13 locks the log before the attempts, as the SDK reads them: a reader of both does not deadlock with it', async () => {
    const harness = await openInbox('pg', { migrate: false });
    const names = resolveTableNames(harness.table);
    await withClients(2, async ([setup, reader]) => {
      // A table at version 12 (one simple-protocol script per migration).
      await setup.query(migrationsTableSql(names));
      for (const migration of MIGRATIONS.filter((m) => m.version <= 12)) {
        await setup.query(migration.sql(names));
        await setup.query(`INSERT INTO ${names.migrations} (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
      }
      await reader.query('BEGIN');
      await reader.query(`SELECT count(*) FROM ${names.deliveries}`);
      const migrating = harness.inbox.migrate();
      // Until the migration waits for the reader's lock on the log.
      await until(async () =>
        expect(Number((await setup.query(`SELECT count(*) AS n FROM pg_locks WHERE NOT granted`)).rows[0].n)).toBeGreaterThan(0),
      );
      // Dropping the key alone locked the attempts first: this read then waited for the migration, which
      // waited for this transaction, and PostgreSQL ended one of them ("deadlock detected").
      await reader.query(`SELECT count(*) FROM ${names.attempts}`);
      await reader.query('COMMIT');
      expect(await migrating).toEqual({ applied: [13, 14], version: 14 });
    });
  });

  it('a TRUNCATE of the log in a REPEATABLE READ transaction empties the queue and attempts committed after its snapshot (migration 13)', async () => {
    const harness = await openInbox('pg');
    const counts = async () =>
      (
        await harness.db.query(
          `SELECT (SELECT count(*) FROM ${harness.table})::int AS log, (SELECT count(*) FROM ${harness.table}_queue)::int AS queue,
                  (SELECT count(*) FROM ${harness.table}_attempts)::int AS attempts`,
        )
      )[0];
    await withClients(1, async ([client]) => {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await client.query(`SELECT count(*) FROM ${harness.table}_attempts`); // the snapshot: every table empty
      await deliverAndRun(harness, 3);
      await deliverMany(harness, 1, 'other-app'); // pending: a queue row
      expect(await counts()).toEqual({ log: 4, queue: 1, attempts: 3 });
      // A query in the trigger would see the snapshot's empty tables and leave these rows: a queue
      // row due forever (drain() never ends) and attempts of deliveries gone.
      await client.query(`TRUNCATE ${harness.table}`);
      await client.query('COMMIT');
      expect(await counts()).toEqual({ log: 0, queue: 0, attempts: 0 });
    });
  });

  it('has no index that reads a column the worker writes, and keeps half of each page free', async () => {
    const harness = await openInbox('pg');
    const indexes = await harness.db.query<{ name: string; def: string }>(
      `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = $1 AND tablename = 'deliveries'`,
      [harness.db.schema],
    );
    expect(indexes.length).toBe(10); // migration 14: natural_key, reconciled_key (columns no worker writes)
    for (const { name, def } of indexes) {
      for (const column of WRITTEN) expect(def, `${name} reads ${column}`).not.toMatch(new RegExp(`\\b${column}\\b`));
    }
  });

  it('a claim locks the rows it asks for, not its cap, and its plan is made once (a generic plan after five)', async () => {
    const harness = await openInbox('pg');
    await deliverMany(harness, 10);
    // A deep queue, as the planner sees it (5,000 due, after the 10 in event order): with LIMIT $1
    // on it, a generic plan guessed a tenth of it and every claim was planned anew.
    await harness.db.query(
      `INSERT INTO ${harness.table} (body, signature, signed_at, secret_index, action, event_time, event_ns, body_key, state, run_at)
       SELECT '\\x7b7d', 'v1', 1, 0, 'app:budget:cap', 'now', 9e18::bigint + g, 'deep-' || g, 'pending', now() - interval '1 hour'
         FROM generate_series(1, 5000) AS g`,
    );
    await harness.db.query(`ANALYZE ${harness.table}_queue`);
    const claim = workerSql(resolveTableNames(harness.table), { order: 'none', onFailure: 'hold', batchSize: 8 }).claim;
    await withClients(2, async ([claiming, other]) => {
      await claiming.query('BEGIN');
      const claimed = await claiming.query({ name: 'cap-check', text: claim, values: [2, 'cap-check', 30] });
      expect(claimed.rows.length).toBe(2);
      // The other 8 due rows are free to another worker while this claim's transaction is open.
      const free = await other.query(
        `SELECT id FROM ${harness.table}_queue WHERE run_at <= now() AND event_ns < 9e18 FOR UPDATE SKIP LOCKED`,
      );
      expect(free.rows.length).toBe(8);
      await claiming.query('ROLLBACK');
      for (let i = 0; i < 7; i++) {
        await claiming.query('BEGIN');
        await claiming.query({ name: 'cap-check', text: claim, values: [1 + (i % 3), 'cap-check', 30] });
        await claiming.query('ROLLBACK');
      }
      const { rows } = await claiming.query<{ generic: number; custom: number }>(
        `SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = 'cap-check'`,
      );
      expect(rows).toEqual([{ generic: 3, custom: 5 }]);
    });
  });

  it("updates a claimed row in place: the claim's updates of the log are HOT where the page has room", async () => {
    const harness = await openInbox('pg');
    await deliverMany(harness, 30);
    await withClients(1, async ([client]) => {
      await client.query('BEGIN');
      const claim = workerSql(resolveTableNames(harness.table)).claim;
      const claimed = await client.query(claim, [30, 'hot-check', 30]);
      expect(claimed.rows.length).toBe(30);
      // This transaction's own counters: exact, unlike the server's statistics, which are flushed later.
      const { rows } = await client.query<{ updated: string; hot: string }>(
        `SELECT pg_stat_get_xact_tuples_updated($1::regclass)::text AS updated, pg_stat_get_xact_tuples_hot_updated($1::regclass)::text AS hot`,
        [harness.table],
      );
      // Before migration 10, none was (state is in the log's partial indexes). Not quite all now: a
      // claimed row grows (its lease columns), so a page filled up to its half may lack the room
      // for its last row's new version, which then goes to another page (26 of 30 here).
      expect(rows[0]!.updated).toBe('30');
      expect(Number(rows[0]!.hot)).toBeGreaterThanOrEqual(24);
      await client.query('ROLLBACK');
    });
  });
});
