import { describe, expect, it } from 'vitest';
import type { ReceiverLogRecord } from '../../src/index.js';
import { CLIENT_KINDS } from './databases.js';
import { at, budgetEvent, createEffectsTable, inboxSuiteSetup, isNativeTransaction, openInbox, sign, sleep, writeEffect } from './helpers.js';

// The worker: handlers run from stored rows, inside the transaction that marks them done, with
// retries, backoff, dead letters, event-time order and a graceful stop, on every client.

inboxSuiteSetup();

const attemptsOf = (harness: { db: { query: (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]> }; attemptsTable: string }, id: string) =>
  harness.db.query(`SELECT attempt, outcome, error, worker, finished_at IS NOT NULL AS finished FROM ${harness.attemptsTable} WHERE delivery_id = $1 ORDER BY attempt`, [id]);

describe.each(CLIENT_KINDS)('inbox worker (%s)', (kind) => {
  it('runs pending deliveries with the row id, attempt 1 and a native transaction whose writes commit', async () => {
    const harness = await openInbox(kind);
    const effects = await createEffectsTable(harness);
    const receiver = harness.receiver();
    const seen: { id: string; attempt: number; native: boolean; action: string }[] = [];
    receiver.on('app:budget:*', async (event, { delivery, transaction }) => {
      seen.push({ id: delivery.id, attempt: delivery.attempt, native: isNativeTransaction(kind, transaction, harness.db.database), action: event.action });
      await writeEffect(kind, transaction, effects, delivery.id, delivery.attempt);
    });
    const first = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
    const second = await harness.deliver(receiver, budgetEvent('app:budget:threshold', at('.2')));

    const worker = harness.work(receiver, { workerId: 'suite-worker' });
    await harness.settle();
    // Stored while the worker runs: it is woken (or polls) and runs it too.
    const third = await harness.deliver(receiver, budgetEvent('app:budget:set', at('.3')));
    await harness.settle();
    await worker.stop();

    const ids = [first.id!, second.id!, third.id!];
    expect([...seen].sort((a, b) => Number(a.id) - Number(b.id))).toEqual([
      { id: ids[0], attempt: 1, native: true, action: 'app:budget:cap' },
      { id: ids[1], attempt: 1, native: true, action: 'app:budget:threshold' },
      { id: ids[2], attempt: 1, native: true, action: 'app:budget:set' },
    ]);
    expect(await harness.db.query(`SELECT delivery_id::text AS id, attempt FROM ${effects} ORDER BY delivery_id`)).toEqual(ids.map((id) => ({ id, attempt: 1 })));
    expect(
      await harness.db.query(
        `SELECT id::text AS id, state, attempts, locked_by, locked_until, last_error, done_at IS NOT NULL AS finished FROM ${harness.table} ORDER BY id`,
      ),
    ).toEqual(ids.map((id) => ({ id, state: 'done', attempts: 1, locked_by: null, locked_until: null, last_error: null, finished: true })));
    for (const id of ids) {
      expect(await attemptsOf(harness, id)).toEqual([{ attempt: 1, outcome: 'succeeded', error: null, worker: 'suite-worker', finished: true }]);
    }
  });

  it('rolls back what a failed attempt wrote and retries: failed, failed, succeeded, one effect', async () => {
    const harness = await openInbox(kind);
    const effects = await createEffectsTable(harness);
    const receiver = harness.receiver();
    receiver.on('app:budget:cap', async (_event, { delivery, transaction }) => {
      await writeEffect(kind, transaction, effects, delivery.id, delivery.attempt);
      if (delivery.attempt < 3) throw new Error(`boom on attempt ${delivery.attempt}`);
    });
    const { id } = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
    harness.work(receiver);
    await harness.settle();

    expect(await harness.db.query(`SELECT delivery_id::text AS id, attempt FROM ${effects}`)).toEqual([{ id, attempt: 3 }]);
    const stored = await harness.inbox.get(id!);
    expect(stored).toMatchObject({ state: 'done', attempts: 3, lastError: null });
    expect(stored?.attemptLog.map(({ attempt, outcome, error }) => ({ attempt, outcome, error }))).toEqual([
      { attempt: 1, outcome: 'failed', error: 'boom on attempt 1' },
      { attempt: 2, outcome: 'failed', error: 'boom on attempt 2' },
      { attempt: 3, outcome: 'succeeded', error: null },
    ]);
    for (const attempt of stored!.attemptLog) expect(attempt.finishedAt).toBeInstanceOf(Date);
  });

  it('ends dead after maxAttempts with a bounded last_error, and is not run again', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    let runs = 0;
    receiver.on('app:budget:cap', () => {
      runs += 1;
      throw new Error('x'.repeat(10_000));
    });
    const { id } = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
    harness.work(receiver, { maxAttempts: 2 });
    await harness.settle();
    await sleep(100); // several poll intervals: a dead delivery stays dead

    expect(runs).toBe(2);
    const [row] = await harness.db.query<{ state: string; attempts: number; length: number; head: string }>(
      `SELECT state, attempts, char_length(last_error) AS length, left(last_error, 10) AS head FROM ${harness.table}`,
    );
    expect(row).toMatchObject({ state: 'dead', attempts: 2, head: 'xxxxxxxxxx' });
    expect(row!.length).toBeLessThanOrEqual(2000);
    expect(row!.length).toBeGreaterThan(1000);
    const lengths = await harness.db.query<{ outcome: string; length: number }>(
      `SELECT outcome, char_length(error) AS length FROM ${harness.attemptsTable} WHERE delivery_id = $1 ORDER BY attempt`,
      [id],
    );
    expect(lengths.map((attempt) => attempt.outcome)).toEqual(['failed', 'failed']);
    for (const attempt of lengths) expect(attempt.length).toBeLessThanOrEqual(2000);
  });

  it('waits the backoff between attempts: at least 200 ms, then 400 ms', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    receiver.on('app:budget:cap', (_event, { delivery }) => {
      if (delivery.attempt < 3) throw new Error('not yet');
    });
    const { id } = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
    harness.work(receiver, { backoff: { baseMs: 200, jitter: 'none' } });
    await harness.settle();

    const log = (await harness.inbox.get(id!))!.attemptLog;
    expect(log.map((attempt) => attempt.outcome)).toEqual(['failed', 'failed', 'succeeded']);
    // Database clock on both sides: a retry is due `delay` after the failure was recorded.
    const gap = (after: number) => log[after]!.startedAt.getTime() - log[after - 1]!.finishedAt!.getTime();
    expect(gap(1)).toBeGreaterThanOrEqual(199);
    expect(gap(2)).toBeGreaterThanOrEqual(399);
    expect(gap(1)).toBeLessThan(5000);
    expect(gap(2)).toBeLessThan(5000);
  });

  it('tells the logger accepted, processed, retried and dead with the delivery id, never the body or signature', async () => {
    const harness = await openInbox(kind);
    const records: ReceiverLogRecord[] = [];
    const receiver = harness.receiver({ logger: (record) => void records.push(record) });
    receiver.on('app:budget:*', (event) => {
      if (event.action === 'app:budget:threshold') throw new Error('handler says no');
    });
    const marker = 'body-marker-6b1f0e';
    const good = sign(budgetEvent('app:budget:cap', at('.1'), { actor: marker }));
    const bad = sign(budgetEvent('app:budget:threshold', at('.2'), { actor: marker }));
    const ok = await receiver.receive({ body: good.bytes, headers: good.headers });
    const failing = await receiver.receive({ body: bad.bytes, headers: bad.headers });
    const worker = harness.work(receiver, { maxAttempts: 2 });
    await harness.settle();
    await worker.stop(); // the worker logs after it records: stop() waits for that

    const about = (id: string | undefined) => records.filter((record) => record.deliveryId === id).map(({ event, attempt }) => ({ event, attempt }));
    expect(about(ok.id)).toEqual([
      { event: 'accepted', attempt: undefined },
      { event: 'processed', attempt: 1 },
    ]);
    expect(about(failing.id)).toEqual([
      { event: 'accepted', attempt: undefined },
      { event: 'retried', attempt: 1 },
      { event: 'dead', attempt: 2 },
    ]);
    const text = JSON.stringify(records);
    for (const secret of [marker, good.headers['service-signature']!, bad.headers['service-signature']!, 'v1=', good.body, 'handler says no']) {
      expect(text).not.toContain(secret);
    }
  });

  it('with concurrency 1 runs pending deliveries in event-time order to the nanosecond, not arrival order', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const order: string[] = [];
    receiver.on('app:budget:cap', (event) => void order.push(event.timestamp));
    const arrivals = [at('.000000003'), at('.000000001'), '2026-04-27T10:29:59.999999999Z', at('.000000002')];
    for (const timestamp of arrivals) await harness.deliver(receiver, budgetEvent('app:budget:cap', timestamp));
    harness.work(receiver, { concurrency: 1 });
    await harness.settle();
    expect(order).toEqual(['2026-04-27T10:29:59.999999999Z', at('.000000001'), at('.000000002'), at('.000000003')]);
  });

  it('stop() waits for the in-flight handler and leaves nothing running or half-recorded', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const events: string[] = [];
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    receiver.on('app:budget:cap', async () => {
      started();
      await sleep(300);
      events.push('handler finished');
    });
    const slow = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
    const waiting = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.2')));
    const worker = harness.work(receiver, { concurrency: 1 });
    await handlerStarted;
    await worker.stop();
    events.push('stop resolved');

    expect(events).toEqual(['handler finished', 'stop resolved']);
    expect(await harness.count(`state = 'running'`)).toBe(0);
    expect(await harness.db.query(`SELECT * FROM ${harness.attemptsTable} WHERE outcome IS NULL`)).toEqual([]);
    expect(await harness.db.query(`SELECT id::text AS id, state, attempts, locked_by FROM ${harness.table} ORDER BY id`)).toEqual([
      { id: slow.id, state: 'done', attempts: 1, locked_by: null },
      { id: waiting.id, state: 'pending', attempts: 0, locked_by: null },
    ]);
  });
});
