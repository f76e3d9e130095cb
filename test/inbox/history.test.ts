/**
 * The inbox hour by hour (issue 20 point 6): what `readHistory` counts, bucketed by the database's
 * hours; a handler failure's class and bounded stack on its attempt; what each app needs. Real
 * PostgreSQL and PGlite.
 */
import { describe, expect, it } from 'vitest';
import { setUp } from '../kit/setup.js';
import { readAppAttention } from '../../src/inbox/operate/console-reads.js';
import { readHistory } from '../../src/inbox/operate/history.js';
import { MAX_STACK_LENGTH } from '../../src/inbox/rows.js';
import { resolveTableNames } from '../../src/inbox/schema/table-name.js';
import { at, budgetEvent, openInbox } from './helpers.js';
import { SCENARIO_KINDS } from './databases.js';

// A worker, retries and PGlite's boot on a shared, busy machine: generous bounds (no timing asserted).
setUp({ testTimeoutMs: 120_000 });

class PagerError extends Error {}
const TICK = 'tick-2026-04-27T10:30:00Z-1f0c9a7e5b2d4c3e8a9b0c1d2e3f4a5b';

describe.each(SCENARIO_KINDS)('history on %s', (kind) => {
  it('counts accepted, duplicate, refused, retried and dead per hour, and the wait from stored to processed', async () => {
    const harness = await openInbox(kind);
    const names = resolveTableNames(harness.db.table);
    const query = (text: string, params?: readonly unknown[]) => harness.db.query(text, params);
    const receiver = harness.receiver();
    receiver.on('app:budget:threshold', async () => {});
    receiver.on('app:budget:cap', async () => {
      const error = new PagerError('pager unreachable');
      error.stack = `PagerError: pager unreachable\n${'    at somewhere (file.js:1:1)\n'.repeat(400)}`;
      throw error;
    });
    receiver.on('app:budget:reset', async () => {
      throw 'a plain string';
    });
    const outcomes = [];
    for (const event of [
      budgetEvent('app:budget:threshold', at('.1'), { tick_id: TICK }),
      budgetEvent('app:budget:cap', at('.2')),
      budgetEvent('app:budget:reset', at('.3')),
      budgetEvent('app:budget:threshold', at('.4'), { tick_id: TICK }), // the same event, a new time: a duplicate row
    ])
      outcomes.push((await harness.deliver(receiver, event)).outcome);
    expect(outcomes).toEqual(['accepted', 'accepted', 'accepted', 'duplicate']);
    harness.work(receiver, { maxAttempts: 2 });
    await harness.settle();

    const empty = await readHistory(query, names, 'day');
    expect(empty.hours).toHaveLength(24);
    expect(empty.refusalsRecorded).toBe(true); // every schema from version 4 on records them
    expect(empty.liveWorkers).toBe(1); // the worker above, by its heartbeat
    const current = empty.hours[23]!;
    expect(current).toMatchObject({ accepted: 3, duplicate: 1, refused: 0, retried: 2, dead: 2, processed: 1 });
    expect(current.p50Ms).toBeGreaterThanOrEqual(0);
    expect(current.p95Ms).toBeGreaterThanOrEqual(current.p50Ms!);
    expect(empty.hours.slice(0, 23).every((hour) => hour.accepted === 0 && hour.dead === 0)).toBe(true);
    expect(Date.parse(current.hour) - Date.parse(empty.hours[0]!.hour)).toBe(23 * 3_600_000);

    // Three hours earlier, by the database's clock; and refusals recorded.
    await harness.db.query(`UPDATE ${harness.table} SET received_at = received_at - interval '3 hours' WHERE action = 'app:budget:reset'`);
    await harness.db.query(
      `INSERT INTO ${names.refusals} VALUES (date_trunc('minute', now()), 'bad_signature', 5),
         (date_trunc('minute', now()), 'stale', 1), (date_trunc('minute', now() - interval '1 hour'), 'bad_signature', 2),
         (now() - interval '2 days', 'stale', 99)`,
    );
    // Live workers: a beat under 3 beats old is live; one 10 beats old is gone.
    await harness.db.query(
      `INSERT INTO ${names.workers} (id, host, pid, last_seen_at, beat_ms, concurrency, mode)
         VALUES ('gone', 'elsewhere', 1, now() - interval '10 seconds', 1000, 1, 'none')`,
    );
    const day = await readHistory(query, names, 'day');
    expect(day.liveWorkers).toBe(1);
    expect(day.refusalsRecorded).toBe(true);
    expect(day.hours[23]).toMatchObject({ accepted: 2, refused: 6 });
    expect(day.hours[22]).toMatchObject({ refused: 2 });
    expect(day.hours[20]).toMatchObject({ accepted: 1, refused: 0 });
    const week = await readHistory(query, names, 'week');
    expect(week.hours).toHaveLength(168);
    expect(week.hours.reduce((sum, hour) => sum + (hour.refused ?? 0), 0)).toBe(107);
    await expect(readHistory(query, names, 'month' as never)).rejects.toThrow(/day" or "week/);

    // The class and a bounded stack of what the handler threw; nothing when it threw no Error.
    const attempts = await harness.db.query<Record<string, unknown>>(
      `SELECT d.action, x.attempt, x.error, x.error_class, x.error_stack FROM ${harness.attemptsTable} x JOIN ${harness.table} d ON d.id = x.delivery_id
        WHERE x.outcome = 'failed' ORDER BY d.action, x.attempt`,
    );
    expect(attempts.map((row) => [row['action'], row['error_class']])).toEqual([
      ['app:budget:cap', 'PagerError'],
      ['app:budget:cap', 'PagerError'],
      ['app:budget:reset', null],
      ['app:budget:reset', null],
    ]);
    const stack = String(attempts[0]!['error_stack']);
    expect(stack.startsWith('PagerError: pager unreachable\n    at somewhere')).toBe(true);
    expect(stack.length).toBe(MAX_STACK_LENGTH);
    expect(stack.endsWith('…')).toBe(true);
    expect(attempts[0]!['error']).toBe('pager unreachable');
    expect(attempts[2]!['error_stack']).toBeNull();
    const detail = await harness.inbox.get(String((await harness.rows()).find((row) => row['action'] === 'app:budget:cap')!['id']));
    expect(detail?.attemptLog[0]).toMatchObject({ errorClass: 'PagerError', error: 'pager unreachable' });

    // What each app needs: billing-api has its two dead deliveries.
    const attention = await readAppAttention(query, names);
    expect(attention.get('billing-api')).toEqual({ dead: 2, failing: 0, pending: 0 });
  });
});
