import { describe, expect, it } from 'vitest';
import { setUp } from '../../kit/setup.js';
import type { Alert } from '../../../src/inbox.js';
import { until } from '../../kit/time.js';
import { budgetEvent, openInbox, type InboxHarness } from '../helpers.js';
import { MINUTE, only, TestClock, told, watch } from './helpers.js';
import { SCENARIO_KINDS } from '../databases.js';

/**
 * The incident engine on real PostgreSQL (SCENARIO_KINDS: pg): one evaluator across watchers (a lease
 * row), no duplicate alert across restarts, alerts onAlert refused offered again, the real loop.
 */
setUp({ testTimeoutMs: 60_000, hookTimeoutMs: 120_000 });

const noop = (n: number) =>
  budgetEvent('app:budget:auto-shutdown:noop', new Date(Date.now() - n * 1000).toISOString(), { tick_id: `tick-noop-${n}` });

/** Three deliveries, then a clock 20 minutes on: the silence rule opens. */
async function silentRack(h: InboxHarness, clock: TestClock) {
  const receiver = h.receiver();
  for (const n of [3, 2, 1]) await h.deliver(receiver, noop(n));
  clock.advance(20 * MINUTE);
  return receiver;
}

describe.each(SCENARIO_KINDS)('incidents on %s', (kind) => {
  it('one evaluator across two watchers: the lease holder alerts once; the other takes over on stop() or when the lease runs out', async () => {
    const h = await openInbox(kind);
    const clock = new TestClock();
    const a = await watch(h, clock, { rules: only('silence'), watcherId: 'watcher-a' });
    const b = await watch(h, clock, { rules: only('silence'), watcherId: 'watcher-b' });
    const receiver = await silentRack(h, clock);
    const results = await Promise.all([a.watcher.check(), b.watcher.check(), a.watcher.check(), b.watcher.check()]);
    expect(results.map((r) => r.evaluated)).toEqual([true, false, true, false]);
    expect(told([...a.alerts, ...b.alerts])).toEqual(['silence open']);
    expect(await h.db.query(`SELECT holder FROM ${h.table}_watch_lease`)).toEqual([{ holder: 'watcher-a' }]);

    await a.watcher.stop();
    expect(await h.db.query(`SELECT holder FROM ${h.table}_watch_lease`)).toEqual([]);
    expect((await b.watcher.check()).evaluated).toBe(true);
    expect(told([...a.alerts, ...b.alerts])).toEqual(['silence open']); // b found it open: no second alert

    // b dies without stop(): c waits until b's lease (3 intervals, at least 30 s) has run out.
    const c = await watch(h, clock, { rules: only('silence'), watcherId: 'watcher-c' });
    expect((await c.watcher.check()).evaluated).toBe(false);
    clock.advance(3 * 3_600_000 + 1);
    const taken = await c.watcher.check();
    expect(taken).toEqual({ evaluated: true, alerts: [] }); // still silent: the incident stays open, told once
    expect(await h.db.query(`SELECT holder FROM ${h.table}_watch_lease`)).toEqual([{ holder: 'watcher-c' }]);
    await h.deliver(receiver, noop(0));
    clock.t = Date.now();
    expect(told((await c.watcher.check()).alerts)).toEqual(['silence resolved']);
    expect(told([...a.alerts, ...b.alerts, ...c.alerts])).toEqual(['silence open', 'silence resolved']);
  });

  it('an alert onAlert threw on is offered again at the next evaluation, once accepted never again', async () => {
    const h = await openInbox(kind);
    const clock = new TestClock();
    const offered: string[] = [];
    let refuse = true;
    const { watcher, errors } = await watch(h, clock, {
      rules: only('silence'),
      onAlert: (alert: Alert) => {
        offered.push(`${alert.key} ${alert.status}`);
        if (refuse) throw new Error('pager down');
      },
    });
    const receiver = await silentRack(h, clock);
    await watcher.check();
    expect(offered).toEqual(['silence open']);
    expect(errors.map((e) => e.message)).toEqual([
      'onAlert threw for silence (open); it is offered again at the next evaluation: pager down',
    ]);
    // Resolved while its open alert is still owed: the resolve waits for the open.
    await h.deliver(receiver, noop(0));
    clock.t = Date.now();
    await watcher.check();
    expect(offered).toEqual(['silence open', 'silence open']);
    refuse = false;
    const result = await watcher.check();
    expect(told(result.alerts)).toEqual(['silence open', 'silence resolved']);
    expect(offered).toEqual(['silence open', 'silence open', 'silence open', 'silence resolved']);
    await watcher.check();
    expect(offered).toHaveLength(4);
    expect(await h.db.query(`SELECT open_sent, resolve_sent FROM ${h.table}_incidents`)).toEqual([{ open_sent: true, resolve_sent: true }]);
  });

  it('a crash between opening an incident and telling it: the next watcher tells it (at least once)', async () => {
    const h = await openInbox(kind);
    const clock = new TestClock();
    const first = await watch(h, clock, { rules: only('silence') });
    await silentRack(h, clock);
    await first.watcher.check();
    await first.watcher.stop();
    // As if the process died after the INSERT and before onAlert returned.
    await h.db.query(`UPDATE ${h.table}_incidents SET open_sent = false`);
    const second = await watch(h, clock, { rules: only('silence') });
    expect(told(second.alerts)).toEqual(['silence open']);
    expect(second.alerts[0]!.incidentId).toBe(first.alerts[0]!.incidentId);
  });

  it('the loop evaluates by itself every intervalMs, and stop() ends it', async () => {
    const h = await openInbox(kind);
    const receiver = h.receiver();
    receiver.on('app:budget:cap', () => {
      throw new Error('handler down');
    });
    const alerts: Alert[] = [];
    const watcher = h.inbox.watch({ onAlert: (alert) => void alerts.push(alert), intervalMs: 50, retention: false, rules: only('dead') });
    await h.deliver(receiver, budgetEvent('app:budget:cap', new Date().toISOString()));
    await h.work(receiver, { maxAttempts: 1 }).drain();
    await until(() => expect(told(alerts)).toEqual(['dead open']), 30_000);
    await watcher.stop();
    expect(await watcher.check()).toEqual({ evaluated: false, alerts: [] });
  });
});

describe('watch options', () => {
  it('refuses what it cannot use, naming the option', async () => {
    const h = await openInbox('pg', { migrate: false });
    const watch = (options: object) => h.inbox.watch(options as never);
    expect(() => watch({ retention: false })).toThrow(
      new TypeError('inbox.watch has nothing to do: pass onAlert (alerts), or keep retention on'),
    );
    expect(() => watch({ onAlert: 'https://pager' })).toThrow(new TypeError('onAlert must be a function (alert) => void'));
    expect(() => watch({ onAlert: () => {}, intervalMs: 0 })).toThrow(
      new RangeError('intervalMs must be a whole number from 1 to 2147483647, got 0'),
    );
    expect(() => watch({ onAlert: () => {}, rules: { silence: { afterMs: -1 } } })).toThrow(
      new RangeError('rules.silence.afterMs must be a whole number from 1 to 9007199254740991, got -1'),
    );
    expect(() => watch({ onAlert: () => {}, rules: { dead: true } })).toThrow(
      new TypeError('rules.dead must be an options object or false, got true'),
    );
    expect(() => watch({ onAlert: () => {}, retention: { done: '30d' } })).toThrow(
      new RangeError('retention.done must be a whole number from 1 to 9007199254740991, got 30d'),
    );
    expect(() => watch({ onAlert: () => {}, retention: { batchSize: 0 } })).toThrow(
      new RangeError('retention.batchSize must be a whole number from 1 to 100000, got 0'),
    );
  });

  it('reports an unmigrated table through onError, and stops cleanly', async () => {
    const h = await openInbox('pg', { migrate: false });
    const errors: Error[] = [];
    const watcher = h.inbox.watch({ onAlert: () => {}, onError: (error) => errors.push(error), retention: false, intervalMs: 3_600_000 });
    await expect(watcher.check()).rejects.toMatchObject({ code: 'inbox_not_migrated' });
    // The loop's own evaluation (at start) reports to onError instead of rejecting.
    await until(() => expect(errors).not.toEqual([]), 30_000);
    await watcher.stop();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'inbox_not_migrated' });
  });
});
