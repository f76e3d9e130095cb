import { describe, expect, it } from 'vitest';
import type { Receiver, ReceiverLogRecord } from '../../src/index.js';
import type { WorkOptions } from '../../src/inbox.js';
import { CLIENT_KINDS } from './databases.js';
import { at, budgetEvent, inboxSuiteSetup, nowSeconds, openInbox, sign, type InboxHarness } from './helpers.js';

// Reading and operating a stored inbox: list, get, retry, replay, stats, prune, on every client.

inboxSuiteSetup();

/** Runs a worker until nothing is pending or running, then stops it. */
async function runUntilSettled(harness: InboxHarness, receiver: Receiver<unknown>, options: WorkOptions = {}): Promise<void> {
  const worker = harness.work(receiver, options);
  await harness.settle();
  await worker.stop();
}

/**
 * Six deliveries in every state, arriving out of event-time order. Event order (asc):
 * release, threshold, cap, set (same nanosecond as cap, arrived later), armed, truncated.
 */
async function seed(harness: InboxHarness) {
  const receiver = harness.receiver({ ignore: ['app:budget:per-service-truncated'] });
  receiver.onAny((event) => {
    if ((event.data as Record<string, unknown>)['app'] === 'checkout-web') throw new Error('no');
  });
  const t = nowSeconds() - 5;
  const deliver = async (action: string, timestamp: string, app: string) => (await harness.deliver(receiver, budgetEvent(action, timestamp, { app }), { t })).id!;
  const cap = await deliver('app:budget:cap', at('.000000002'), 'billing-api');
  const threshold = await deliver('app:budget:threshold', at('.000000001'), 'billing-api');
  const armed = await deliver('app:budget:auto-shutdown:armed', at('.5'), 'checkout-web');
  const release = await deliver('release:create', '2026-04-27T10:29:59.999999999Z', 'reports-worker');
  const truncated = await deliver('app:budget:per-service-truncated', '2026-04-27T10:30:01Z', 'data-pipeline');
  await runUntilSettled(harness, receiver, { maxAttempts: 1 });
  const set = await deliver('app:budget:set', at('.000000002'), 'billing-api'); // stays pending: no worker now
  return { t, ids: { release, threshold, cap, set, armed, truncated } };
}

const idsOf = (page: { deliveries: readonly { id: string }[] }) => page.deliveries.map((delivery) => delivery.id);

describe.each(CLIENT_KINDS)('inbox list/get (%s)', (kind) => {
  it('lists by event time to the nanosecond then arrival, newest first with desc, and pages with the cursor', async () => {
    const harness = await openInbox(kind);
    const { t, ids } = await seed(harness);
    const ascending = [ids.release, ids.threshold, ids.cap, ids.set, ids.armed, ids.truncated];

    const all = await harness.inbox.list();
    expect(idsOf(all)).toEqual(ascending);
    expect(all.next).toBeUndefined();
    expect(idsOf(await harness.inbox.list({ order: 'desc' }))).toEqual([...ascending].reverse());
    expect(all.deliveries.map((delivery) => delivery.state)).toEqual(['done', 'done', 'done', 'pending', 'dead', 'ignored']);
    expect(all.deliveries[4]).toEqual({
      id: ids.armed,
      state: 'dead',
      action: 'app:budget:auto-shutdown:armed',
      app: 'checkout-web',
      tickId: null,
      eventTime: at('.5'),
      eventNanos: 1_777_285_800_500_000_000n,
      receivedAt: expect.any(Date),
      signedAt: t,
      secretIndex: 1,
      attempts: 1,
      runAt: expect.any(Date),
      lastError: 'no',
      doneAt: null,
      replayedAt: null,
    });

    // Five budget rows, two a page, both ways: every row once, in order, the tie (cap, set) split across pages.
    for (const order of ['asc', 'desc'] as const) {
      const pages: string[][] = [];
      let after: string | undefined;
      do {
        const page = await harness.inbox.list({ action: 'app:budget:*', limit: 2, order, ...(after === undefined ? {} : { after }) });
        pages.push(idsOf(page));
        after = page.next;
      } while (after !== undefined && pages.length < 10);
      const budget = ascending.slice(1);
      const expected = order === 'asc' ? budget : [...budget].reverse();
      expect(pages).toEqual([expected.slice(0, 2), expected.slice(2, 4), expected.slice(4)]);
    }
  });

  it('filters by event time (Date and RFC 3339 with nanoseconds), action, pattern, app and state, and refuses bad arguments', async () => {
    const harness = await openInbox(kind);
    const { ids } = await seed(harness);
    const list = async (options: Parameters<typeof harness.inbox.list>[0]) => idsOf(await harness.inbox.list(options));

    expect(await list({ from: at('.000000002') })).toEqual([ids.cap, ids.set, ids.armed, ids.truncated]);
    expect(await list({ to: at('.000000002') })).toEqual([ids.release, ids.threshold]);
    expect(await list({ from: at('.000000001'), to: at('.000000002') })).toEqual([ids.threshold]);
    // A Date has milliseconds: from 10:30:00.000 includes .000000001; to 10:30:00.500 excludes .5 exactly.
    expect(await list({ from: new Date('2026-04-27T10:30:00.000Z'), to: new Date('2026-04-27T10:30:00.500Z') })).toEqual([ids.threshold, ids.cap, ids.set]);
    expect(await list({ from: 1_777_285_800_500_000_000n })).toEqual([ids.armed, ids.truncated]);

    expect(await list({ action: 'app:budget:cap' })).toEqual([ids.cap]);
    expect(await list({ action: 'app:budget:*' })).toEqual([ids.threshold, ids.cap, ids.set, ids.armed, ids.truncated]);
    expect(await list({ action: ['app:budget:set', 'app:budget:cap'] })).toEqual([ids.cap, ids.set]);
    expect(await list({ action: ['release:*', 'app:budget:auto-shutdown:*'] })).toEqual([ids.release, ids.armed]);
    expect(await list({ action: 'app:budget' })).toEqual([]);
    expect(await list({ app: 'billing-api' })).toEqual([ids.threshold, ids.cap, ids.set]);
    expect(await list({ state: 'done' })).toEqual([ids.release, ids.threshold, ids.cap]);
    expect(await list({ state: ['dead', 'ignored'] })).toEqual([ids.armed, ids.truncated]);
    expect(await list({ state: 'pending', app: 'billing-api', action: 'app:budget:*' })).toEqual([ids.set]);
    expect(await list({ ids: [ids.truncated, ids.release] })).toEqual([ids.release, ids.truncated]);

    await expect(harness.inbox.list({ after: 'not-a-cursor' })).rejects.toThrow(TypeError);
    await expect(harness.inbox.list({ limit: 0 })).rejects.toThrow(RangeError);
    await expect(harness.inbox.list({ limit: 1001 })).rejects.toThrow(RangeError);
    await expect(harness.inbox.list({ state: 'finished' as never })).rejects.toThrow(RangeError);
    await expect(harness.inbox.list({ action: 'app*' })).rejects.toThrow(TypeError);
    await expect(harness.inbox.list({ from: 'yesterday' })).rejects.toThrow(RangeError);
  });

  it('get() gives the raw body, signature, parsed event and attempt log; undefined for an unknown id; TypeError for a malformed one', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    receiver.on('app:budget:cap', (_event, { delivery }) => {
      if (delivery.attempt === 1) throw new Error('first try fails');
    });
    const event = budgetEvent('app:budget:cap', at('.123456789'), { actor: 'Zoë' });
    const request = sign(event);
    const { id } = await receiver.receive({ body: request.bytes, headers: request.headers });
    await runUntilSettled(harness, receiver, { workerId: 'ops-worker' });

    const stored = await harness.inbox.get(id!);
    expect(Buffer.from(stored!.body).equals(Buffer.from(request.bytes))).toBe(true);
    expect(stored).toMatchObject({ id, state: 'done', attempts: 2, eventNanos: 1_777_285_800_123_456_789n, signature: request.headers['service-signature'] });
    expect(stored!.event).toEqual(event);
    expect(stored!.doneAt).toBeInstanceOf(Date);
    expect(stored!.attemptLog).toEqual([
      { attempt: 1, worker: 'ops-worker', startedAt: expect.any(Date), finishedAt: expect.any(Date), outcome: 'failed', error: 'first try fails' },
      { attempt: 2, worker: 'ops-worker', startedAt: expect.any(Date), finishedAt: expect.any(Date), outcome: 'succeeded', error: null },
    ]);

    expect(await harness.inbox.get(String(Number(id) + 1000))).toBeUndefined();
    await expect(harness.inbox.get('abc')).rejects.toThrow(TypeError);
    await expect(harness.inbox.get('0')).rejects.toThrow(TypeError);
  });
});

describe.each(CLIENT_KINDS)('inbox retry/replay/stats/prune (%s)', (kind) => {
  it('retry(id) and retry({ action }) move only dead deliveries to pending with a fresh budget of attempts', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver({ ignore: ['app:budget:reset'] });
    const failuresLeft = new Map<string, number>();
    receiver.on('app:budget:*', (_event, { delivery }) => {
      const left = failuresLeft.get(delivery.id) ?? 0;
      failuresLeft.set(delivery.id, left - 1);
      if (left > 0) throw new Error(`failing, ${left} left`);
    });
    const deliver = async (action: string, fraction: string) => (await harness.deliver(receiver, budgetEvent(action, at(fraction)))).id!;
    const cap = await deliver('app:budget:cap', '.1');
    const threshold = await deliver('app:budget:threshold', '.2');
    const done = await deliver('app:budget:set', '.3');
    const ignored = await deliver('app:budget:reset', '.4');
    failuresLeft.set(cap, 2).set(threshold, 2);
    await runUntilSettled(harness, receiver, { maxAttempts: 2 });
    expect(await harness.db.query(`SELECT state, attempts FROM ${harness.table} ORDER BY id`)).toEqual([
      { state: 'dead', attempts: 2 },
      { state: 'dead', attempts: 2 },
      { state: 'done', attempts: 1 },
      { state: 'ignored', attempts: 0 },
    ]);

    expect(await harness.inbox.retry(done)).toBe(0);
    expect(await harness.inbox.retry(ignored)).toBe(0);
    expect(await harness.inbox.retry(cap)).toBe(1);
    expect(await harness.inbox.retry(cap)).toBe(0); // pending now, not dead
    expect(await harness.db.query(`SELECT state, attempts, attempt_base, last_error, run_at <= now() AS due FROM ${harness.table} WHERE id = $1`, [cap])).toEqual([
      { state: 'pending', attempts: 2, attempt_base: 2, last_error: null, due: true },
    ]);
    expect(await harness.db.query(`SELECT state FROM ${harness.table} WHERE id = $1`, [threshold])).toEqual([{ state: 'dead' }]);
    expect(await harness.inbox.retry({ action: 'app:budget:threshold' })).toBe(1);
    expect(await harness.inbox.retry({ action: 'app:budget:*' })).toBe(0);

    // cap fails once more, then succeeds: only a fresh budget of 2 lets attempt 4 run.
    failuresLeft.set(cap, 1).set(threshold, 0);
    await runUntilSettled(harness, receiver, { maxAttempts: 2 });
    expect((await harness.inbox.get(cap))!.attemptLog.map((attempt) => attempt.outcome)).toEqual(['failed', 'failed', 'failed', 'succeeded']);
    expect(await harness.db.query(`SELECT id::text AS id, state, attempts FROM ${harness.table} ORDER BY id`)).toEqual([
      { id: cap, state: 'done', attempts: 4 },
      { id: threshold, state: 'done', attempts: 3 },
      { id: done, state: 'done', attempts: 1 },
      { id: ignored, state: 'ignored', attempts: 0 },
    ]);
  });

  it('replay(filter) moves only done deliveries back, runs them again in event-time order and logs them as replayed', async () => {
    const harness = await openInbox(kind);
    const records: ReceiverLogRecord[] = [];
    const receiver = harness.receiver({ ignore: ['app:budget:reset'], logger: (record) => void records.push(record) });
    const runs: string[] = [];
    receiver.on('app:budget:*', (event, { delivery }) => {
      runs.push(delivery.id);
      if (event.action === 'app:budget:clear') throw new Error('always fails');
    });
    const deliver = async (action: string, fraction: string) => (await harness.deliver(receiver, budgetEvent(action, at(fraction)))).id!;
    const late = await deliver('app:budget:cap', '.000000003');
    const early = await deliver('app:budget:cap', '.000000001');
    const middle = await deliver('app:budget:threshold', '.000000002');
    const dead = await deliver('app:budget:clear', '.4');
    const ignored = await deliver('app:budget:reset', '.5');
    await runUntilSettled(harness, receiver, { maxAttempts: 1, concurrency: 1 });
    const pending = await deliver('app:budget:set', '.6');

    expect(await harness.inbox.replay({ action: 'release:*' })).toBe(0);
    runs.length = 0;
    records.length = 0;
    expect(await harness.inbox.replay({})).toBe(3);
    const rows = await harness.db.query<{ id: string; state: string; replayed: boolean; attempt_base: number }>(
      `SELECT id::text AS id, state, replayed_at IS NOT NULL AS replayed, attempt_base FROM ${harness.table} ORDER BY id`,
    );
    expect(rows).toEqual([
      { id: late, state: 'pending', replayed: true, attempt_base: 1 },
      { id: early, state: 'pending', replayed: true, attempt_base: 1 },
      { id: middle, state: 'pending', replayed: true, attempt_base: 1 },
      { id: dead, state: 'dead', replayed: false, attempt_base: 0 },
      { id: ignored, state: 'ignored', replayed: false, attempt_base: 0 },
      { id: pending, state: 'pending', replayed: false, attempt_base: 0 },
    ]);

    await runUntilSettled(harness, receiver, { concurrency: 1 });
    expect(runs).toEqual([early, middle, late, pending]);
    expect(records.filter((record) => record.event === 'replayed').map(({ deliveryId, attempt }) => ({ deliveryId, attempt }))).toEqual([
      { deliveryId: early, attempt: 2 },
      { deliveryId: middle, attempt: 2 },
      { deliveryId: late, attempt: 2 },
    ]);
    expect(records.filter((record) => record.event === 'processed').map((record) => record.deliveryId)).toEqual([pending]);
    const replayed = await harness.inbox.get(early);
    expect(replayed).toMatchObject({ state: 'done', attempts: 2, replayedAt: expect.any(Date) });
    expect(replayed!.attemptLog.map((attempt) => attempt.outcome)).toEqual(['succeeded', 'succeeded']);
    await expect(harness.inbox.replay(null as never)).rejects.toThrow(TypeError);
  });

  it('stats() counts by state and ages the oldest pending delivery (null when none)', async () => {
    const harness = await openInbox(kind);
    expect(await harness.inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 0, ignored: 0, total: 0, oldestPendingAgeMs: null });
    await seed(harness);
    // The seed leaves one pending delivery; one more, received 5 s ago as far as the table knows.
    const receiver = harness.receiver();
    receiver.on('app:budget:*', () => {});
    const older = (await harness.deliver(receiver, budgetEvent('app:budget:clear', at('.7')))).id!;
    await harness.db.query(`UPDATE ${harness.table} SET received_at = now() - interval '5 seconds' WHERE id = $1`, [older]);

    const stats = await harness.inbox.stats();
    expect(stats).toEqual({ pending: 2, running: 0, done: 3, dead: 1, ignored: 1, total: 7, oldestPendingAgeMs: expect.any(Number) });
    expect(stats.oldestPendingAgeMs).toBeGreaterThanOrEqual(5000);
    expect(stats.oldestPendingAgeMs).toBeLessThan(65_000);

    await runUntilSettled(harness, receiver);
    expect(await harness.inbox.stats()).toEqual({ pending: 0, running: 0, done: 5, dead: 1, ignored: 1, total: 7, oldestPendingAgeMs: null });
  });

  it('prune({ before }) deletes done, dead and ignored deliveries received before, never pending ones, with their attempts', async () => {
    const harness = await openInbox(kind);
    const { ids } = await seed(harness);
    const { cap, set } = ids;
    // Everything but `cap` was received two days ago, as far as the table knows.
    await harness.db.query(`UPDATE ${harness.table} SET received_at = now() - interval '2 days' WHERE id <> $1`, [cap]);

    // release (done), threshold (done), armed (dead), truncated (ignored); set is pending.
    expect(await harness.inbox.prune({ before: new Date(Date.now() - 86_400_000) })).toBe(4);
    expect(await harness.db.query(`SELECT id::text AS id, state FROM ${harness.table} ORDER BY id`)).toEqual([
      { id: cap, state: 'done' },
      { id: set, state: 'pending' },
    ]);
    const attempts = await harness.db.query<{ id: string }>(`SELECT delivery_id::text AS id FROM ${harness.attemptsTable} ORDER BY delivery_id`);
    expect(attempts).toEqual([{ id: cap }]);

    expect(await harness.inbox.prune({ before: new Date(Date.now() - 86_400_000) })).toBe(0);
    await expect(harness.inbox.prune({ before: '2026-01-01' as never })).rejects.toThrow(TypeError);
  });
});
