import { describe, expect, it } from 'vitest';
import { setUp } from '../../kit/setup.js';
import { until } from '../../kit/time.js';
import { budgetEvent, openInbox, type InboxHarness } from '../helpers.js';
import { TestClock, watch } from './helpers.js';
import { SCENARIO_KINDS } from '../databases.js';

/**
 * Retention on real PostgreSQL (pg) and PGlite: per state ages, dead and pending kept by default,
 * bounded batches, one pruner at a time, and the automatic pass of the watcher's loop.
 */
setUp({ testTimeoutMs: 60_000, hookTimeoutMs: 120_000 });

const DAY = 86_400_000;

/** One delivery in each state a user meets: done, dead, ignored, duplicate, pending. */
async function oneOfEach(h: InboxHarness) {
  const receiver = h.receiver({ ignore: ['app:budget:threshold'] });
  receiver.on('app:budget:cap', () => {});
  receiver.on('app:budget:auto-shutdown:failed', () => {
    throw new Error('handler down');
  });
  const at = new Date().toISOString();
  await h.deliver(receiver, budgetEvent('app:budget:cap', at, { tick_id: 'tick-done' }));
  await h.deliver(receiver, budgetEvent('app:budget:auto-shutdown:failed', at, { tick_id: 'tick-dead' }));
  await h.deliver(receiver, budgetEvent('app:budget:threshold', at, { tick_id: 'tick-ignored' }));
  // The same event as the done one sent again with a new time: kept as a duplicate row.
  const again = await h.deliver(
    receiver,
    budgetEvent('app:budget:cap', new Date(Date.now() + 1000).toISOString(), { tick_id: 'tick-done' }),
  );
  if (again.outcome !== 'duplicate') throw new Error(`expected a duplicate row, got ${again.outcome}`);
  const worker = h.work(receiver, { maxAttempts: 1 });
  await worker.drain();
  await worker.stop();
  await h.deliver(receiver, budgetEvent('app:budget:cap', at, { tick_id: 'tick-pending' }));
  return receiver;
}

const states = async (h: InboxHarness) =>
  (await h.db.query<{ state: string }>(`SELECT state FROM ${h.table} ORDER BY state`)).map((row) => row.state);

describe.each(SCENARIO_KINDS)('retention on %s', (kind) => {
  it('by default deletes done, ignored and duplicate rows after 30 days, never dead or pending ones, and their attempts with them', async () => {
    const h = await openInbox(kind);
    await oneOfEach(h);
    expect(await states(h)).toEqual(['dead', 'done', 'duplicate', 'ignored', 'pending']);
    const clock = new TestClock();
    const { watcher } = await watch(h, clock, { retention: {}, rules: {} });
    clock.advance(29 * DAY);
    expect(await watcher.prune()).toEqual({ ran: true, deleted: { done: 0, ignored: 0, duplicate: 0 }, total: 0 });
    clock.advance(DAY + 1000);
    expect(await watcher.prune()).toEqual({ ran: true, deleted: { done: 1, ignored: 1, duplicate: 1 }, total: 3 });
    expect(await states(h)).toEqual(['dead', 'pending']);
    const attempts = await h.db.query<{ state: string }>(
      `SELECT d.state FROM ${h.attemptsTable} a JOIN ${h.table} d ON d.id = a.delivery_id`,
    );
    expect(attempts.map((row) => row.state)).toEqual(['dead']);
    expect(Number((await h.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${h.attemptsTable}`))[0]!.n)).toBe(1);
  });

  it('takes an age per state, dead and pending included when asked, in batches of batchSize', async () => {
    const h = await openInbox(kind);
    const receiver = await oneOfEach(h);
    for (let i = 0; i < 5; i++)
      await h.deliver(receiver, budgetEvent('app:budget:threshold', new Date().toISOString(), { tick_id: `t-${i}` }));
    const clock = new TestClock();
    const { watcher } = await watch(h, clock, {
      retention: { done: false, ignored: 2 * DAY, duplicate: false, dead: 2 * DAY, pending: 3 * DAY, batchSize: 2, pauseMs: 0 },
    });
    clock.advance(2 * DAY + 1000);
    expect(await watcher.prune()).toEqual({ ran: true, deleted: { ignored: 6, dead: 1, pending: 0 }, total: 7 });
    expect(await states(h)).toEqual(['done', 'duplicate', 'pending']);
    clock.advance(DAY);
    expect(await watcher.prune()).toEqual({ ran: true, deleted: { ignored: 0, dead: 0, pending: 1 }, total: 1 });
  });

  it('prunes on one watcher at a time: the other prunes nothing while the lease is held', async () => {
    const h = await openInbox(kind);
    await oneOfEach(h);
    const clock = new TestClock();
    const a = await watch(h, clock, { retention: {}, watcherId: 'a' });
    const b = await watch(h, clock, { retention: {}, watcherId: 'b' });
    clock.advance(31 * DAY);
    // a renews its lease (and starts the pass its interval calls for); b gets nothing to do.
    expect((await a.watcher.check()).evaluated).toBe(true);
    expect(await b.watcher.prune()).toEqual({ ran: false, deleted: {}, total: 0 });
    expect(await a.watcher.prune()).toMatchObject({ ran: true, total: 0 }); // after the pass it started
    expect(await states(h)).toEqual(['dead', 'pending']);
  });

  it('runs by itself from the loop, and prunes resolved incidents past the longest age too', async () => {
    const h = await openInbox(kind);
    await oneOfEach(h);
    const old = new Date(Date.now() - 40 * DAY);
    await h.db.query(`UPDATE ${h.table} SET received_at = $1 WHERE state <> 'pending'`, [old]);
    await h.db.query(
      `INSERT INTO ${h.table}_incidents (rule, key, severity, since, opened_at, resolved_at, summary, fields, open_sent, resolve_sent)
       VALUES ('silence', 'silence', 'warning', $1, $1, $1, 'old', '{}', true, true),
              ('dead', 'dead', 'critical', $1, $1, NULL, 'still open', '{}', true, false)`,
      [old],
    );
    const watcher = h.inbox.watch({ intervalMs: 3_600_000 });
    try {
      await until(async () => expect(await states(h)).toEqual(['dead', 'pending']), 30_000);
      await until(async () => expect(await h.db.query(`SELECT key FROM ${h.table}_incidents`)).toEqual([{ key: 'dead' }]), 30_000);
    } finally {
      await watcher.stop();
    }
  });
});
