import { describe, expect, it } from 'vitest';
import { setUp } from '../../kit/setup.js';
import { deferred, until } from '../../kit/time.js';
import { appRecorder, at, budgetEvent, openInbox, type InboxHarness } from '../helpers.js';

/**
 * order: 'per-app' in one process on PostgreSQL: what a user relies on is the order handlers saw
 * and the rows left behind. Across processes: test/inbox/order-processes.test.ts.
 */
setUp();

const event = (app: string, fraction: string) => budgetEvent('app:budget:cap', at(fraction), { app });

async function stateOf(harness: InboxHarness, app: string) {
  return harness.db.query(`SELECT state, attempts FROM ${harness.table} WHERE app = $1 ORDER BY event_ns`, [app]);
}

describe("order: 'per-app' (pg)", () => {
  for (const mode of ['transactional', 'batched'] as const) {
    it(`mode '${mode}': runs each app one delivery at a time in event order, though they arrived reversed, and apps side by side`, async () => {
      const harness = await openInbox('pg');
      const receiver = harness.receiver();
      const record = appRecorder();
      receiver.on('app:budget:cap', (e) => record.enter(e.data.app, e.timestamp, 15));
      for (const fraction of ['.5', '.4', '.3', '.2', '.1']) {
        for (const app of ['one', 'two', 'three']) await harness.deliver(receiver, event(app, fraction));
      }
      await harness.work(receiver, { mode, order: 'per-app', concurrency: 4 }).drain();
      expect(record.overlaps).toBe(0);
      for (const app of ['one', 'two', 'three']) expect(record.seen.get(app)).toEqual(['.1', '.2', '.3', '.4', '.5'].map(at));
      expect(await harness.count(`state = 'done'`)).toBe(15);
    });
  }

  it('events of an app stored while one of it runs wait for it, then run oldest first', async () => {
    const harness = await openInbox('pg');
    const receiver = harness.receiver();
    const seen: string[] = [];
    const gate = deferred<void>();
    receiver.on('app:budget:cap', async (e) => {
      if (e.data.app === 'one') seen.push(e.timestamp);
      else seen.push(`${e.data.app} ${e.timestamp}`);
      if (e.timestamp === at('.9')) await gate.promise;
    });
    await harness.deliver(receiver, event('one', '.9'));
    const worker = harness.work(receiver, { order: 'per-app', concurrency: 4 });
    await until(() => expect(seen).toEqual([at('.9')]));
    for (const fraction of ['.3', '.1', '.2']) await harness.deliver(receiver, event('one', fraction));
    // Three free slots, three due rows: none may start. Another app's event stored after them runs: the worker claimed past them.
    await harness.deliver(receiver, event('two', '.5'));
    await until(() => expect(seen).toEqual([at('.9'), `two ${at('.5')}`]));
    gate.resolve();
    await worker.drain();
    expect(seen).toEqual([...['.9'].map(at), `two ${at('.5')}`, ...['.1', '.2', '.3'].map(at)]);
  });

  it("'hold': an app whose delivery keeps failing holds only its own later events; 100 other apps flow; dead releases it", async () => {
    const harness = await openInbox('pg');
    const receiver = harness.receiver();
    const record = appRecorder();
    receiver.on('app:budget:cap', async (e) => {
      if (e.data.app === 'stuck' && e.timestamp === at('.1')) throw new Error('the chat service refuses this one');
      await record.enter(e.data.app, e.timestamp, 0);
    });
    await harness.deliver(receiver, event('stuck', '.1'));
    await harness.deliver(receiver, event('stuck', '.2'));
    for (let i = 0; i < 100; i++) {
      await harness.deliver(receiver, event(`app-${i}`, '.3'));
      await harness.deliver(receiver, event(`app-${i}`, '.4'));
    }
    // No race with the clock: the stuck delivery may retry as often as it likes (short backoff, no
    // attempt limit to speak of) while the other apps run; a second worker then gives it one attempt left.
    const retrying = { order: 'per-app', concurrency: 6, backoff: { baseMs: 20, maxMs: 50, jitter: 'none' } } as const;
    const worker = harness.work(receiver, { ...retrying, maxAttempts: 1000 });
    const firstAttempts = async () => Number((await stateOf(harness, 'stuck'))[0]!['attempts']);
    await until(async () => {
      expect(await harness.count(`state = 'done'`), 'the other apps finish while stuck retries').toBe(200);
      expect(await firstAttempts()).toBeGreaterThanOrEqual(2);
    }, 60_000);
    await worker.stop();
    // 200 deliveries done while the stuck one failed and retried; its later event never ran.
    const [first, second] = await stateOf(harness, 'stuck');
    expect(first!['state']).toBe('pending');
    expect(second).toEqual({ state: 'pending', attempts: 0 });
    expect(record.seen.get('stuck')).toBeUndefined();
    expect(record.overlaps).toBe(0);
    // Dead after its last attempt: the app is released and its later event runs.
    const attempts = Number(first!['attempts']);
    const last = harness.work(receiver, { ...retrying, maxAttempts: attempts + 1 });
    await harness.settle(30_000);
    await last.stop();
    expect(await stateOf(harness, 'stuck')).toEqual([
      { state: 'dead', attempts: attempts + 1 },
      { state: 'done', attempts: 1 },
    ]);
    expect(record.seen.get('stuck')).toEqual([at('.2')]);
  });

  it("'skip': later events of the app run while the failed one waits for its retry, which runs after them", async () => {
    const harness = await openInbox('pg');
    const receiver = harness.receiver();
    const seen: string[] = [];
    let failures = 0;
    receiver.on('app:budget:cap', (e) => {
      seen.push(e.timestamp);
      if (e.timestamp === at('.1') && failures++ === 0) throw new Error('once');
    });
    for (const fraction of ['.1', '.2', '.3']) await harness.deliver(receiver, event('one', fraction));
    harness.work(receiver, { order: 'per-app', onFailure: 'skip', concurrency: 4, backoff: { baseMs: 300, jitter: 'none' } });
    await harness.settle();
    expect(seen).toEqual(['.1', '.2', '.3', '.1'].map(at));
    expect(await stateOf(harness, 'one')).toEqual([
      { state: 'done', attempts: 2 },
      { state: 'done', attempts: 1 },
      { state: 'done', attempts: 1 },
    ]);
  });

  it('refuses an unknown order or onFailure, and onFailure without per-app order, with a RangeError', async () => {
    const harness = await openInbox('pg');
    const { inbox } = harness;
    const receiver = harness.receiver();
    expect(() => inbox.work(receiver, { order: 'per-tenant' as never })).toThrow(
      new RangeError(`order must be 'none' or 'per-app', got "per-tenant"`),
    );
    expect(() => inbox.work(receiver, { order: 'per-app', onFailure: 'drop' as never })).toThrow(
      new RangeError(`onFailure must be 'hold' or 'skip', got "drop"`),
    );
    expect(() => inbox.work(receiver, { onFailure: 'skip' })).toThrow(
      new RangeError("onFailure applies to order: 'per-app' only: without an order, a failed delivery never holds another"),
    );
  });
});
