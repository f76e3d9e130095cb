import { describe, expect, it } from 'vitest';
import { budgetEvent, openInbox } from '../helpers.js';
import { MINUTE, only, TestClock, told, watch, watchSuiteSetup } from './helpers.js';

/**
 * Each alert rule driven on real PostgreSQL (pg) and PGlite with a test clock: the incident opens
 * once past its bound, stays quiet while it holds, and resolves once, with the fields a pager uses.
 */
watchSuiteSetup();

const event = (action: string, minutesAgo: number, data: Record<string, string> = {}) =>
  budgetEvent(action, new Date(Date.now() - minutesAgo * MINUTE).toISOString(), data);

describe.each(['pg', 'pglite'] as const)('alert rules on %s', (kind) => {
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
    expect(opened!.summary).toMatch(/^1 delivery went dead in \S+ since \d\d:\d\d:\d\d UTC \(app:budget:cap\): fix the handler/);

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
    await h.db.query(`UPDATE ${h.attemptsTable} SET started_at = started_at - interval '11 minutes', finished_at = finished_at - interval '11 minutes'`);
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
    const { watcher, alerts } = await watch(h, clock, { rules: only('backlog', { afterMs: 5 * MINUTE }) });
    const receiver = h.receiver();
    receiver.on('app:budget:cap', () => {});
    await h.deliver(receiver, event('app:budget:cap', 0));
    clock.advance(4 * MINUTE);
    await watcher.check();
    expect(alerts).toEqual([]);
    clock.advance(2 * MINUTE);
    await watcher.check();
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
    const { watcher, alerts } = await watch(h, clock, { rules: only('silence', { afterMs: 15 * MINUTE, minDeliveries: 3 }) });
    const receiver = h.receiver();
    await h.deliver(receiver, event('app:budget:auto-shutdown:noop', 2, { tick_id: 'tick-1' }));
    await h.deliver(receiver, event('app:budget:auto-shutdown:noop', 1, { tick_id: 'tick-2' }));
    clock.advance(16 * MINUTE);
    await watcher.check();
    expect(alerts).toEqual([]); // two deliveries: not yet a rack that was sending
    clock.t = Date.now();
    await h.deliver(receiver, event('app:budget:auto-shutdown:noop', 0, { tick_id: 'tick-3' }));
    clock.advance(14 * MINUTE);
    await watcher.check();
    expect(alerts).toEqual([]);
    clock.advance(2 * MINUTE);
    await watcher.check();
    expect(told(alerts)).toEqual(['silence open']);
    expect(alerts[0]).toMatchObject({ rule: 'silence', severity: 'warning', fields: { deliveriesBefore: 3, afterMs: 15 * MINUTE } });
    expect(alerts[0]!.summary).toMatch(/^no delivery accepted by \S+ for 16 min \(the last at \d\d:\d\d:\d\d UTC, 3 deliveries in the 60 min before\)/);
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
    const { watcher, alerts } = await watch(h, clock, { rules: only('overdueLifecycle', { graceMs: 30 * MINUTE }) });
    const receiver = h.receiver();
    const tick = 'tick-1777285800-0123456789abcdef0123456789abcdef';
    const expected = new Date(Date.now() - 20 * MINUTE).toISOString();
    await h.deliver(receiver, event('app:budget:auto-shutdown:armed', 25, { tick_id: tick, expected_shutdown_at: expected }));
    // Noise the rule must not read as an outcome, and another app's countdown that fired.
    await h.deliver(receiver, event('app:budget:auto-shutdown:noop', 1, { tick_id: 'tick-noop' }));
    await h.deliver(receiver, { ...event('app:budget:auto-shutdown:armed', 25, { tick_id: 'tick-other', expected_shutdown_at: expected }), data: { app: 'other', rack: 'r', actor: 'system', tick_id: 'tick-other', expected_shutdown_at: expected } });
    await h.deliver(receiver, { ...event('app:budget:auto-shutdown:fired', 19), data: { app: 'other', rack: 'r', actor: 'system', tick_id: 'tick-other' } });
    await watcher.check();
    expect(alerts).toEqual([]); // 20 min late, grace 30
    clock.advance(11 * MINUTE);
    await watcher.check();
    expect(told(alerts)).toEqual([`overdue_lifecycle:billing-api:${tick} open`]);
    expect(alerts[0]).toMatchObject({
      rule: 'overdue_lifecycle',
      since: new Date(expected),
      fields: { app: 'billing-api', lifecycle: 'auto-shutdown', phase: 'armed', tickId: tick, expectedShutdownAt: expected, graceMs: 30 * MINUTE },
    });
    expect(alerts[0]!.summary).toMatch(new RegExp(`^billing-api: auto-shutdown armed \\(${tick}\\) was due to shut down at \\d\\d:\\d\\d:\\d\\d UTC; no fired, failed or cancelled 31 min later`));
    // The outcome arrives late (its event time before the check): the lifecycle ended.
    await h.deliver(receiver, event('app:budget:auto-shutdown:fired', 19, { tick_id: tick }));
    await watcher.check();
    expect(told(alerts)).toEqual([`overdue_lifecycle:billing-api:${tick} open`, `overdue_lifecycle:billing-api:${tick} resolved`]);
  });
});
