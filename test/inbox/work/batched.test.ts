import { describe, expect, it, vi } from 'vitest';
import { setUp } from '../../kit/setup.js';
import { WebhookInboxError } from '../../../src/inbox.js';
import { deferred, within } from '../../kit/time.js';
import { at, heldHandler, budgetEvent, openInbox, sleep, type InboxHarness } from '../helpers.js';
import { SCENARIO_KINDS } from '../databases.js';

/**
 * mode: 'batched' in one process, on PostgreSQL (pg, postgres.js) and PGlite: the rows each outcome leaves, the
 * attempts recorded, and what `context.transaction` does. Across processes (a worker killed
 * mid-batch, two workers sharing a table): test/inbox/batched-processes.test.ts.
 */
// As with room for PGlite's boot on a machine whose cores other suites share.
setUp({ testTimeoutMs: 60_000 });

const BATCHED = { mode: 'batched' as const, concurrency: 4, batchSize: 8 };

async function attemptsOf(harness: InboxHarness, id: string) {
  return harness.db.query(
    `SELECT attempt, outcome, error IS NOT NULL AS has_error FROM ${harness.attemptsTable} WHERE delivery_id = $1 ORDER BY attempt`,
    [id],
  );
}

async function rowOf(harness: InboxHarness, id: string) {
  const [row] = await harness.db.query<Record<string, unknown>>(
    `SELECT state, attempts, locked_by, last_error, done_at IS NOT NULL AS finished,
            extract(epoch FROM run_at - now())::float8 AS due_in_s FROM ${harness.table} WHERE id = $1`,
    [id],
  );
  return row!;
}

const deliverMany = (harness: InboxHarness, receiver: ReturnType<InboxHarness['receiver']>, n: number) =>
  harness.deliverMany(receiver, n, { app: (i) => `app-${i}` });

for (const kind of SCENARIO_KINDS) {
  describe(`mode: 'batched' (${kind})`, () => {
    it('runs every delivery once, records one succeeded attempt each, and leaves every row done', async () => {
      const harness = await openInbox(kind);
      const receiver = harness.receiver();
      const seen: string[] = [];
      receiver.on('app:budget:cap', async (_event, { delivery }) => {
        await sleep(1); // the handler's pace: the batch's handlers end out of order
        seen.push(`${delivery.id}/${delivery.attempt}`);
      });
      const ids = await deliverMany(harness, receiver, 30);
      await harness.work(receiver, BATCHED).drain();
      expect(seen.sort()).toEqual(ids.map((id) => `${id}/1`).sort());
      for (const id of ids) {
        expect(await rowOf(harness, id)).toMatchObject({ state: 'done', attempts: 1, locked_by: null, last_error: null, finished: true });
        expect(await attemptsOf(harness, id)).toEqual([{ attempt: 1, outcome: 'succeeded', has_error: false }]);
      }
    });

    it('a failed attempt is recorded with its error and the delivery is due again after the backoff', async () => {
      const harness = await openInbox(kind);
      const receiver = harness.receiver();
      receiver.on('app:budget:cap', () => {
        throw new Error('the service answered 502');
      });
      const [id] = await deliverMany(harness, receiver, 1);
      const worker = harness.work(receiver, { ...BATCHED, maxAttempts: 3, backoff: { baseMs: 60_000, jitter: 'none' } });
      await worker.drain(); // the retry is a minute away: not due, not waited for
      const row = await rowOf(harness, id!);
      expect(row).toMatchObject({ state: 'pending', attempts: 1, locked_by: null, last_error: 'the service answered 502' });
      expect(row['due_in_s']).toBeGreaterThan(55);
      expect(row['due_in_s']).toBeLessThanOrEqual(60);
      expect(await attemptsOf(harness, id!)).toEqual([{ attempt: 1, outcome: 'failed', has_error: true }]);
    });

    it('a delivery that keeps failing is dead after maxAttempts, each attempt recorded as failed', async () => {
      const harness = await openInbox(kind);
      const receiver = harness.receiver();
      let calls = 0;
      receiver.on('app:budget:cap', () => {
        calls++;
        throw new Error('still down');
      });
      const [id] = await deliverMany(harness, receiver, 1);
      harness.work(receiver, { ...BATCHED, maxAttempts: 3, backoff: { baseMs: 5, jitter: 'none' } });
      await harness.settle();
      expect(calls).toBe(3);
      expect(await rowOf(harness, id!)).toMatchObject({ state: 'dead', attempts: 3, locked_by: null, last_error: 'still down' });
      expect(await attemptsOf(harness, id!)).toEqual([1, 2, 3].map((attempt) => ({ attempt, outcome: 'failed', has_error: true })));
    });

    it('an ignored delivery is never claimed: no handler, no attempt', async () => {
      const harness = await openInbox(kind);
      const receiver = harness.receiver({ ignore: ['app:budget:cap'] });
      let calls = 0;
      receiver.onAny(() => void calls++);
      const result = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
      expect(result.outcome).toBe('ignored');
      await harness.work(receiver, BATCHED).drain();
      expect(calls).toBe(0);
      expect(await rowOf(harness, result.id!)).toMatchObject({ state: 'ignored', attempts: 0 });
      expect(await attemptsOf(harness, result.id!)).toEqual([]);
    });

    it('context.transaction can be destructured; using it throws inbox_no_transaction, and the attempt fails with that error', async () => {
      const harness = await openInbox(kind);
      const receiver = harness.receiver();
      const thrown: unknown[] = [];
      receiver.on('app:budget:cap', async (_event, { transaction }) => {
        try {
          await (transaction as { query(text: string): Promise<unknown> }).query('SELECT 1');
        } catch (error) {
          thrown.push(error);
          throw error;
        }
      });
      const [id] = await deliverMany(harness, receiver, 1);
      await harness.work(receiver, { ...BATCHED, maxAttempts: 1 }).drain();
      expect(thrown).toHaveLength(1);
      expect(thrown[0]).toBeInstanceOf(WebhookInboxError);
      expect(thrown[0]).toMatchObject({ code: 'inbox_no_transaction', status: 500 });
      expect((thrown[0] as Error).message).toContain("mode: 'batched'");
      expect(await rowOf(harness, id!)).toMatchObject({ state: 'dead', attempts: 1 });
    });

    it('holds one batch ahead of its handlers, so a second worker on the table takes the rest: 5 and 5 of 10, batchSize 5', async () => {
      const harness = await openInbox(kind);
      const { receiver, release, calls } = heldHandler(harness);
      await deliverMany(harness, receiver, 10);
      const options = { mode: 'batched' as const, concurrency: 1, batchSize: 5 };
      const first = harness.work(receiver, { ...options, workerId: 'first' });
      await vi.waitFor(() => expect(calls()).toBe(1), { timeout: 4000 });
      // 1 slot + 5 ahead: one claim of 5, and no other until half of it is gone.
      await vi.waitFor(async () => expect(await harness.count(`state = 'running'`)).toBe(5));
      const second = harness.work(receiver, { ...options, workerId: 'second' });
      await vi.waitFor(async () => expect(await harness.count(`state = 'running'`)).toBe(10), { timeout: 4000 });
      const held = await harness.db.query(
        `SELECT locked_by, count(*)::int AS n FROM ${harness.table} WHERE state = 'running' GROUP BY 1 ORDER BY 1`,
      );
      expect(held).toEqual([
        { locked_by: 'first', n: 5 },
        { locked_by: 'second', n: 5 },
      ]);
      // Each claim counted its attempts (attempts = 1); an attempt is written once, with its outcome: none yet.
      expect(await harness.count(`state = 'running' AND attempts = 1`)).toBe(10);
      expect(await harness.db.query(`SELECT count(*)::int AS n FROM ${harness.attemptsTable}`)).toEqual([{ n: 0 }]);
      release();
      await first.drain();
      await Promise.all([first.stop(), second.stop()]);
      expect(await harness.count(`state = 'done'`)).toBe(10);
    });

    it('stop() gives back what was claimed and not started: no attempt left behind, the rows pending again', async () => {
      const harness = await openInbox(kind);
      const { receiver, release, calls } = heldHandler(harness);
      await deliverMany(harness, receiver, 10);
      const worker = harness.work(receiver, { mode: 'batched', concurrency: 1, batchSize: 10 });
      await vi.waitFor(() => expect(calls()).toBe(1), { timeout: 4000 });
      const stopped = worker.stop();
      release();
      await stopped;
      expect(calls()).toBe(1);
      expect(await harness.count(`state = 'done'`)).toBe(1);
      expect(await harness.count(`state = 'pending' AND attempts = 0 AND locked_by IS NULL`)).toBe(9);
      const attempts = await harness.db.query(`SELECT outcome FROM ${harness.attemptsTable}`);
      expect(attempts).toEqual([{ outcome: 'succeeded' }]);
    });
  });
}

describe("mode: 'batched' options", () => {
  it('refuses an unknown mode with a RangeError naming both modes', async () => {
    const harness = await openInbox('pg');
    expect(() => harness.inbox.work(harness.receiver(), { mode: 'fast' as never })).toThrow(
      new RangeError(`mode must be 'transactional' or 'batched', got "fast"`),
    );
  });

  it('needs no connection per handler: concurrency 50 on a pool of 8', async () => {
    const harness = await openInbox('pg');
    const receiver = harness.receiver();
    let running = 0;
    let most = 0;
    // Each handler holds its slot until more than a pool's worth run at once (then all go on): no
    // timing involved, and a worker that needed a connection per handler would time the handlers out.
    const crowded = deferred<void>();
    receiver.on('app:budget:cap', async () => {
      most = Math.max(most, ++running);
      if (running > 8) crowded.resolve();
      await within(crowded.promise, 10_000, 'more than 8 handlers at once');
      running--;
    });
    await deliverMany(harness, receiver, 60);
    await harness.work(receiver, { mode: 'batched', concurrency: 50 }).drain();
    expect(await harness.count(`state = 'done'`)).toBe(60);
    expect(most).toBeGreaterThan(8);
    expect(() => harness.inbox.work(receiver, { concurrency: 50 })).toThrow(RangeError);
  });
});
