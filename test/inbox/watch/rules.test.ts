import { describe, expect, it } from 'vitest';
import { setUp } from '../../kit/setup.js';
import { budgetEvent, openInbox, sign } from '../helpers.js';
import { MINUTE, only, TestClock, told, watch } from './helpers.js';
import { SCENARIO_KINDS } from '../databases.js';

/**
 * Each alert rule driven on real PostgreSQL (pg) and PGlite with a test clock: the incident opens
 * once past its bound, stays quiet while it holds, and resolves once, with the fields a pager uses.
 */
setUp({ testTimeoutMs: 60_000, hookTimeoutMs: 120_000 });

const event = (action: string, minutesAgo: number, data: Record<string, string> = {}) =>
  budgetEvent(action, new Date(Date.now() - minutesAgo * MINUTE).toISOString(), data);

describe.each(SCENARIO_KINDS)('alert rules on %s', (kind) => {
  it('dead: one incident per burst, deliveries joining it without a new alert, resolved by a retry', async () => {
    const h = await openInbox(kind);
    const clock = new TestClock();
    const { watcher, alerts } = await watch(h, clock, { rules: only('dead') });
    const receiver = h.receiver();
    let fail = true;
    receiver.on('app:budget:cap', () => {
      if (fail) throw new Error('handler down');
    });
    const worker = h.work(receiver, { maxAttempts: 1 });
    const first = await h.deliver(receiver, event('app:budget:cap', 1));
    await worker.drain();
    await watcher.check();
    expect(told(alerts)).toEqual(['dead open']);
    const [opened] = alerts;
    expect(opened).toMatchObject({ rule: 'dead', severity: 'critical', status: 'open', table: h.inbox.table, resolvedAt: null });
    expect(opened!.fields).toMatchObject({ count: 1, deliveryIds: [first.id], actions: { 'app:budget:cap': 1 }, apps: ['billing-api'] });
    expect(opened!.summary).toMatch(
      /^1 delivery went dead in \S+ since (?:\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d \d\d:\d\d) UTC \(app:budget:cap\): fix the handler/,
    );

    // A second one goes dead: it joins the open incident, no new alert.
    const second = await h.deliver(receiver, event('app:budget:cap', 0, { tick_id: 'tick-2' }));
    await worker.drain();
    await watcher.check();
    expect(told(alerts)).toEqual(['dead open']);
    const [current] = await watcher.incidents();
    expect(current!.fields).toMatchObject({ count: 2, deliveryIds: [first.id, second.id] });
    expect(current!.summary).toMatch(/^2 deliveries went dead/);

    fail = false;
    expect(await h.inbox.retry({ state: 'dead' })).toBe(2);
    await worker.drain();
    await watcher.check();
    expect(told(alerts)).toEqual(['dead open', 'dead resolved']);
    expect(alerts[1]).toMatchObject({ incidentId: opened!.incidentId, status: 'resolved', resolvedAt: clock.now() });
    expect(alerts[1]!.summary).toMatch(/^resolved after 0 s: 2 deliveries went dead/);
    await watcher.check();
    expect(alerts).toHaveLength(2);
  });

  it('dead: resolves once the window passed since the last went dead, and a new burst opens a new incident', async () => {
    const h = await openInbox(kind);
    const clock = new TestClock();
    const { watcher, alerts } = await watch(h, clock, { rules: only('dead', { windowMs: 10 * MINUTE }) });
    const receiver = h.receiver();
    receiver.on('app:budget:cap', () => {
      throw new Error('handler down');
    });
    const worker = h.work(receiver, { maxAttempts: 1 });
    await h.deliver(receiver, event('app:budget:cap', 1));
    await worker.drain();
    await watcher.check();
    // Eleven minutes pass for the data: the delivery went dead before the window.
    await h.db.query(
      `UPDATE ${h.attemptsTable} SET started_at = started_at - interval '11 minutes', finished_at = finished_at - interval '11 minutes'`,
    );
    await watcher.check();
    expect(told(alerts)).toEqual(['dead open', 'dead resolved']);
    await h.deliver(receiver, event('app:budget:cap', 0, { tick_id: 'tick-2' }));
    await worker.drain();
    await watcher.check();
    expect(told(alerts)).toEqual(['dead open', 'dead resolved', 'dead open']);
    expect(alerts[2]!.incidentId).not.toBe(alerts[0]!.incidentId);
    expect(alerts[2]!.fields).toMatchObject({ count: 1 });
  });

  it('backlog: a delivery due past the bound opens it; a worker running it resolves it', async () => {
    const h = await openInbox(kind);
    const clock = new TestClock();
    const { watcher, alerts, later } = await watch(h, clock, { rules: only('backlog', { afterMs: 5 * MINUTE }) });
    const receiver = h.receiver();
    receiver.on('app:budget:cap', () => {});
    await h.deliver(receiver, event('app:budget:cap', 0));
    await later(4 * MINUTE);
    expect(alerts).toEqual([]);
    await later(2 * MINUTE);
    expect(told(alerts)).toEqual(['backlog open']);
    expect(alerts[0]).toMatchObject({ rule: 'backlog', severity: 'warning', fields: { due: 1, afterMs: 5 * MINUTE } });
    expect(alerts[0]!.fields['oldestDueMs']).toBeGreaterThanOrEqual(6 * MINUTE - 5000);
    expect(alerts[0]!.summary).toMatch(/^1 delivery is due in \S+ and the oldest has waited 6 min \(bound 5 min\)/);
    await watcher.check();
    expect(alerts).toHaveLength(1);
    await h.work(receiver).drain();
    await watcher.check();
    expect(told(alerts)).toEqual(['backlog open', 'backlog resolved']);
  });

  it('silence: quiet past the bound after a sending rack opens it; the next delivery resolves it', async () => {
    const h = await openInbox(kind);
    const clock = new TestClock();
    const { watcher, alerts, later } = await watch(h, clock, { rules: only('silence', { afterMs: 15 * MINUTE, minDeliveries: 3 }) });
    const receiver = h.receiver();
    await h.deliver(receiver, event('app:budget:auto-shutdown:noop', 2, { tick_id: 'tick-1' }));
    await h.deliver(receiver, event('app:budget:auto-shutdown:noop', 1, { tick_id: 'tick-2' }));
    await later(16 * MINUTE);
    expect(alerts).toEqual([]); // two deliveries: not yet a rack that was sending
    clock.t = Date.now();
    await h.deliver(receiver, event('app:budget:auto-shutdown:noop', 0, { tick_id: 'tick-3' }));
    await later(14 * MINUTE);
    expect(alerts).toEqual([]);
    await later(2 * MINUTE);
    expect(told(alerts)).toEqual(['silence open']);
    expect(alerts[0]).toMatchObject({ rule: 'silence', severity: 'warning', fields: { deliveriesBefore: 3, afterMs: 15 * MINUTE } });
    expect(alerts[0]!.summary).toMatch(
      /^no delivery accepted by \S+ for 16 min \(the last at (?:\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d \d\d:\d\d) UTC, 3 deliveries in the 60 min before\)/,
    );
    await watcher.check();
    expect(alerts).toHaveLength(1);
    await h.deliver(receiver, event('app:budget:auto-shutdown:noop', 0, { tick_id: 'tick-4' }));
    clock.t = Date.now();
    await watcher.check();
    expect(told(alerts)).toEqual(['silence open', 'silence resolved']);
  });

  it('overdue lifecycle: an armed countdown with no outcome past its shutdown time, from createRackState; its outcome resolves it', async () => {
    const h = await openInbox(kind);
    const clock = new TestClock();
    const { watcher, alerts, later } = await watch(h, clock, { rules: only('overdueLifecycle', { graceMs: 30 * MINUTE }) });
    const receiver = h.receiver();
    const tick = 'tick-1777285800-0123456789abcdef0123456789abcdef';
    const expected = new Date(Date.now() - 20 * MINUTE).toISOString();
    await h.deliver(receiver, event('app:budget:auto-shutdown:armed', 25, { tick_id: tick, expected_shutdown_at: expected }));
    // Noise the rule must not read as an outcome, and another app's countdown that fired.
    await h.deliver(receiver, event('app:budget:auto-shutdown:noop', 1, { tick_id: 'tick-noop' }));
    await h.deliver(receiver, {
      ...event('app:budget:auto-shutdown:armed', 25, { tick_id: 'tick-other', expected_shutdown_at: expected }),
      data: { app: 'other', rack: 'r', actor: 'system', tick_id: 'tick-other', expected_shutdown_at: expected },
    });
    await h.deliver(receiver, {
      ...event('app:budget:auto-shutdown:fired', 19),
      data: { app: 'other', rack: 'r', actor: 'system', tick_id: 'tick-other' },
    });
    await watcher.check();
    expect(alerts).toEqual([]); // 20 min late, grace 30
    await later(11 * MINUTE);
    expect(told(alerts)).toEqual([`overdue_lifecycle:billing-api:${tick} open`]);
    expect(alerts[0]).toMatchObject({
      rule: 'overdue_lifecycle',
      since: new Date(expected),
      fields: {
        app: 'billing-api',
        lifecycle: 'auto-shutdown',
        phase: 'armed',
        tickId: tick,
        expectedShutdownAt: expected,
        graceMs: 30 * MINUTE,
      },
    });
    expect(alerts[0]!.summary).toMatch(
      new RegExp(
        `^billing-api: auto-shutdown armed \\(${tick}\\) was due to shut down at (?:\\d\\d:\\d\\d:\\d\\d|\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d) UTC; no fired, failed or cancelled 31 min later`,
      ),
    );
    // The outcome arrives late (its event time before the check): the lifecycle ended.
    await h.deliver(receiver, event('app:budget:auto-shutdown:fired', 19, { tick_id: tick }));
    await watcher.check();
    expect(told(alerts)).toEqual([`overdue_lifecycle:billing-api:${tick} open`, `overdue_lifecycle:billing-api:${tick} resolved`]);
  });

  it('no worker: none live past the bound opens it, it survives a watcher restart, a worker starting resolves it', async () => {
    const h = await openInbox(kind);
    const clock = new TestClock();
    const first = await watch(h, clock, { rules: only('noWorker', { afterMs: 2 * MINUTE }) });
    const receiver = h.receiver();
    receiver.on('app:budget:cap', () => {});
    const worker = h.work(receiver);
    await worker.drain();
    await first.watcher.check();
    expect(first.alerts).toEqual([]);
    await worker.stop(); // leaves: its row goes
    await h.deliver(receiver, event('app:budget:cap', 0));
    await first.watcher.check();
    clock.advance(MINUTE);
    await first.watcher.check();
    expect(first.alerts).toEqual([]);
    clock.advance(MINUTE + 1000);
    await first.watcher.check();
    expect(told(first.alerts)).toEqual(['no_worker open']);
    expect(first.alerts[0]).toMatchObject({ rule: 'no_worker', severity: 'critical', fields: { pending: 1, afterMs: 2 * MINUTE } });
    expect(first.alerts[0]!.fields['lastWorkerSeenAt']).toBeNull();
    expect(first.alerts[0]!.summary).toMatch(/^no live worker on \S+ for 2 min \(bound 2 min\): 1 pending delivery waits/);

    // A new watcher (a restart) finds the incident open and neither re-opens nor resolves it.
    await first.watcher.stop();
    const second = await watch(h, clock, { rules: only('noWorker', { afterMs: 2 * MINUTE }) });
    await second.watcher.check();
    expect(second.alerts).toEqual([]);
    expect((await second.watcher.incidents()).map((a) => a.key)).toEqual(['no_worker']);

    clock.t = Date.now(); // the heartbeat is dated by the database's clock
    await h.work(receiver).drain();
    clock.t = Date.now();
    await second.watcher.check();
    expect(told(second.alerts)).toEqual(['no_worker resolved']);
    expect(second.alerts[0]!.incidentId).toBe(first.alerts[0]!.incidentId);
  });

  it('refusals: above the bound in the window, one incident per code (a wrongly rotated key, an unsigned rack)', async () => {
    const h = await openInbox(kind);
    const clock = new TestClock();
    const { watcher, alerts, later } = await watch(h, clock, { rules: only('refusals', { threshold: 10, byCode: { missing_header: 2 } }) });
    const receiver = h.receiver();
    const refuse = async (request: { body: Uint8Array | string; headers: Record<string, string> }) => {
      await expect(receiver.receive(request)).rejects.toThrow();
    };
    for (let i = 0; i < 11; i++) {
      const wrongKey = sign(event('app:budget:cap', 0, { tick_id: `t-${i}` }), { secrets: 'a-key-rotated-in-the-wrong-order' });
      await refuse({ body: wrongKey.bytes, headers: wrongKey.headers });
    }
    for (let i = 0; i < 3; i++)
      await refuse({ body: JSON.stringify(event('app:budget:cap', 0)), headers: { 'content-type': 'application/json' } });
    await h.inbox.close(); // writes the counts held in memory
    expect(await h.db.query(`SELECT code, sum(count)::int AS n FROM ${h.table}_refusals GROUP BY code ORDER BY code`)).toEqual([
      { code: 'missing_header', n: 3 },
      { code: 'signature_mismatch', n: 11 },
    ]);
    await watcher.check();
    expect(told(alerts)).toEqual(['refusals:missing_header open', 'refusals:signature_mismatch open']);
    expect(alerts[1]).toMatchObject({
      rule: 'refusals',
      severity: 'critical',
      fields: { code: 'signature_mismatch', count: 11, threshold: 10 },
    });
    expect(alerts[1]!.summary).toMatch(
      /^11 deliveries refused with signature_mismatch in the last 5 min \(bound 10\) on \S+: the receiver's secrets do not match/,
    );
    expect(alerts[0]!.summary).toMatch(/^3 deliveries refused with missing_header .*\(bound 2\).*the rack stopped signing/);
    await watcher.check();
    expect(alerts).toHaveLength(2);
    await later(6 * MINUTE);
    expect(told(alerts).slice(2).sort()).toEqual(['refusals:missing_header resolved', 'refusals:signature_mismatch resolved']);
  });
});
