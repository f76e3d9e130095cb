import { describe, expect, it } from 'vitest';
import { setUp } from '../../kit/setup.js';
import { receiverRuntime } from '../../../src/inbox/store/connect-receiver.js';
import { driverFor } from '../../../src/database/detect.js';
import type { Driver } from '../../../src/database/driver.js';
import { resolveTableNames } from '../../../src/inbox/schema/table-name.js';
import { resolveWorkOptions } from '../../../src/inbox/work/options.js';
import { systemClock } from '../../../src/inbox/clock.js';
import { inlineRecorder } from '../../../src/inbox/work/recorders.js';
import { claimedFromRow, runAttempt, type AttemptEnvironment, type Claimed } from '../../../src/inbox/work/run-attempt.js';
import { workerSql, type WorkerSql } from '../../../src/inbox/work/sql.js';
import { at, budgetEvent, createEffectsTable, openInbox, writeEffect, type InboxHarness } from '../helpers.js';

/**
 * Each outcome of one attempt in the default mode (runAttempt with the inline recorder), driven
 * step by step with no worker, no loop and no timer: claim with the worker's own statement, run
 * the attempt, and read the rows its one statement left.
 */
setUp();

const WORKER = 'outcome-worker';

interface Setup {
  harness: InboxHarness;
  env: AttemptEnvironment;
  sql: WorkerSql;
  effects: string;
  handled: string[];
  claim(): Promise<Claimed>;
  run(claimed: Claimed): ReturnType<typeof runAttempt>;
  row(id: string): Promise<Record<string, unknown>>;
  attempts(id: string): Promise<Record<string, unknown>[]>;
}

async function attemptOn(
  handler: (id: string, attempt: number, transaction: unknown, effects: string) => Promise<void>,
  options: { maxAttempts?: number; driver?: (d: Driver, sql: WorkerSql) => Driver } = {},
): Promise<Setup> {
  const harness = await openInbox('pg');
  const effects = await createEffectsTable(harness);
  const receiver = harness.receiver();
  const handled: string[] = [];
  receiver.on('app:budget:*', async (_event, { delivery, transaction }) => {
    handled.push(delivery.id);
    await handler(delivery.id, delivery.attempt, transaction, effects);
  });
  await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
  const real = driverFor(harness.db.database);
  const names = resolveTableNames(harness.db.table);
  const sql = workerSql(names);
  const driver = options.driver ? options.driver(real, sql) : real;
  const resolved = resolveWorkOptions(driver, {
    workerId: WORKER,
    maxAttempts: options.maxAttempts ?? 3,
    backoff: { baseMs: 60_000, jitter: 'none' },
  });
  const env: AttemptEnvironment = {
    runtime: receiverRuntime(receiver)!,
    options: resolved,
    table: names.display,
    recorder: inlineRecorder({ driver, sql, options: resolved, clock: systemClock, health: { failed: () => {}, reachable: () => {} } }),
  };
  return {
    harness,
    env,
    sql,
    run: (claimed) => runAttempt(env, claimed, new AbortController().signal, () => {}),
    effects,
    handled,
    async claim() {
      const [row] = await real.query(sql.claim, [1, WORKER, 30]);
      return claimedFromRow(row!);
    },
    async row(id) {
      const [row] = await harness.db.query(
        `SELECT state, attempts, locked_by, last_error, done_at IS NOT NULL AS finished,
                round(extract(epoch FROM run_at - now()))::int AS due_in_s FROM ${harness.table} WHERE id = $1`,
        [id],
      );
      return row!;
    },
    attempts: (id) =>
      harness.db.query(`SELECT attempt, worker, outcome, error FROM ${harness.attemptsTable} WHERE delivery_id = $1 ORDER BY attempt`, [
        id,
      ]),
  };
}

const effectRows = (setup: Setup) => setup.harness.db.query(`SELECT delivery_id::text AS id, attempt FROM ${setup.effects}`);

describe('one attempt, each outcome and the statement that records it (pg)', () => {
  it("succeeded: the handler's own write and the done mark commit together", async () => {
    const setup = await attemptOn((id, attempt, tx, effects) => writeEffect('pg', tx, effects, id, attempt));
    const claimed = await setup.claim();
    // Counted at the claim (attempts = 1); written once, with its outcome.
    expect(await setup.row(claimed.id)).toMatchObject({ state: 'running', attempts: 1, locked_by: WORKER });
    expect(await setup.attempts(claimed.id)).toEqual([]);
    expect(await setup.run(claimed)).toEqual({ kind: 'succeeded' });
    expect(await setup.row(claimed.id)).toMatchObject({ state: 'done', attempts: 1, locked_by: null, last_error: null, finished: true });
    expect(await setup.attempts(claimed.id)).toEqual([{ attempt: 1, worker: WORKER, outcome: 'succeeded', error: null }]);
    expect(await effectRows(setup)).toEqual([{ id: claimed.id, attempt: 1 }]);
  });

  it("failed with a retry: the handler's write rolled back, pending again after the backoff", async () => {
    const setup = await attemptOn(async (id, attempt, tx, effects) => {
      await writeEffect('pg', tx, effects, id, attempt);
      throw new Error('downstream said 503');
    });
    const claimed = await setup.claim();
    expect(await setup.run(claimed)).toEqual({ kind: 'failed', retryInMs: 60_000 });
    expect(await setup.row(claimed.id)).toMatchObject({ state: 'pending', attempts: 1, locked_by: null, due_in_s: 60 });
    expect((await setup.row(claimed.id))['last_error']).toContain('downstream said 503');
    expect(await setup.attempts(claimed.id)).toEqual([
      { attempt: 1, worker: WORKER, outcome: 'failed', error: expect.stringContaining('503') },
    ]);
    expect(await effectRows(setup)).toEqual([]);
  });

  it('dead: the last attempt allowed failed; nothing scheduled', async () => {
    const setup = await attemptOn(
      async () => {
        throw new Error('always');
      },
      { maxAttempts: 1 },
    );
    const claimed = await setup.claim();
    expect(await setup.run(claimed)).toEqual({ kind: 'dead' });
    expect(await setup.row(claimed.id)).toMatchObject({ state: 'dead', attempts: 1, locked_by: null });
    expect(await setup.attempts(claimed.id)).toEqual([
      { attempt: 1, worker: WORKER, outcome: 'failed', error: expect.stringContaining('always') },
    ]);
  });

  it('dead at once: a stored body that no longer parses runs no handler, whatever attempts are left', async () => {
    const setup = await attemptOn(async () => {});
    await setup.harness.db.query(`UPDATE ${setup.harness.table} SET body = convert_to('not json', 'UTF8')`);
    const claimed = await setup.claim();
    expect(await setup.run(claimed)).toEqual({ kind: 'dead' });
    expect(setup.handled).toEqual([]);
    expect(await setup.row(claimed.id)).toMatchObject({ state: 'dead', attempts: 1 });
    expect((await setup.row(claimed.id))['last_error']).toContain('no longer parses');
  });

  it('lease lost: another worker took the delivery; no handler runs and nothing is written', async () => {
    const setup = await attemptOn(async () => {});
    const claimed = await setup.claim();
    await setup.harness.db.query(`UPDATE ${setup.harness.table} SET locked_by = 'other-worker', attempts = 2`);
    expect(await setup.run(claimed)).toEqual({ kind: 'lease-lost' });
    expect(setup.handled).toEqual([]);
    expect(await setup.row(claimed.id)).toMatchObject({ state: 'running', attempts: 2, locked_by: 'other-worker' });
  });

  it('unrecorded: the database refuses the failure mark; the row stays running for recovery, which counts the attempt crashed', async () => {
    const setup = await attemptOn(
      async () => {
        throw new Error('handler failed');
      },
      {
        driver: (real, sql) => ({
          ...real,
          transaction: (fn, opening) => real.transaction(fn, opening),
          listen: (...args) => real.listen(...args),
          query: (text, params) => (text === sql.fail ? Promise.reject(new Error('connection terminated')) : real.query(text, params)),
        }),
      },
    );
    const claimed = await setup.claim();
    expect(await setup.run(claimed)).toEqual({ kind: 'unrecorded' });
    expect(await setup.row(claimed.id)).toMatchObject({ state: 'running', attempts: 1, locked_by: WORKER });
    // The lease runs out: `recover` (any worker's poll, or drain) ends the attempt as crashed.
    await setup.harness.db.query(`UPDATE ${setup.harness.table} SET locked_until = now() - interval '1 second'`);
    const recovered = await setup.harness.db.query(setup.sql.recover, [3]);
    expect(recovered).toEqual([{ id: claimed.id, attempts: 1, state: 'pending', action: 'app:budget:cap' }]);
    expect(await setup.attempts(claimed.id)).toEqual([
      { attempt: 1, worker: WORKER, outcome: 'crashed', error: 'the worker stopped during this attempt' },
    ]);
  });

  it('released: a claim taken while stop() came is given back, its attempt unrecorded', async () => {
    const setup = await attemptOn(async () => {});
    const claimed = await setup.claim();
    const { release } = workerSql(resolveTableNames(setup.harness.db.table));
    await setup.harness.db.query(release, [JSON.stringify([{ id: claimed.id, attempt: claimed.attempt }]), WORKER]);
    expect(await setup.row(claimed.id)).toMatchObject({ state: 'pending', attempts: 0, locked_by: null });
    expect(await setup.attempts(claimed.id)).toEqual([]);
  });
});
