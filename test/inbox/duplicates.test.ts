// Issue 18, point 1: distinct events are never collapsed, and the inbox keeps every distinct body.
// A delivery that repeats an earlier event with new times is its own row in state 'duplicate'
// (pointing at the first), visible and re-runnable; only byte copies store nothing.
import { describe, expect, it } from 'vitest';
import { setUp } from '../kit/setup.js';
import { createInbox } from '../../src/inbox.js';
import { MIGRATIONS, migrationsTableSql } from '../../src/inbox/schema/migrations.js';
import { resolveTableNames } from '../../src/inbox/schema/table-name.js';
import { CLIENT_KINDS, openDatabase, SCENARIO_KINDS } from './databases.js';
import { at, budgetEvent, FAST, nowSeconds, openInbox, sign } from './helpers.js';

setUp();

const TICK = 'tick-2026-04-27T10:30:00Z-1f0c9a7e5b2d4c3e8a9b0c1d2e3f4a5b';

/** The two `:failed` events a deployed rack sends under one tick (field notes), as it sends them. */
const partialFailure = budgetEvent('app:budget:auto-shutdown:failed', at('.100'), {
  tick_id: TICK,
  failed_services: 'worker',
  partial_state: '1',
  failed_at: at('.100'),
});
const restoreFailure = budgetEvent('app:budget:auto-shutdown:failed', '2026-04-28T08:00:00.5Z', {
  tick_id: TICK,
  failed_services: 'web',
  partial_state: '0',
  failed_at: '2026-04-28T08:00:00.5Z',
});

describe.each(SCENARIO_KINDS)('same-event duplicates in the inbox (%s)', (kind) => {
  it('two :failed events under one tick_id that say different things are both accepted and both run', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const seen: string[] = [];
    receiver.on(
      'app:budget:auto-shutdown:failed',
      (event) => void seen.push((event.data as unknown as Record<string, string>)['failed_services'] ?? '?'),
    );
    const first = await harness.deliver(receiver, partialFailure);
    const second = await harness.deliver(receiver, restoreFailure);
    expect([first.outcome, second.outcome]).toEqual(['accepted', 'accepted']);
    harness.work(receiver, FAST);
    await harness.settle();
    expect(seen.sort()).toEqual(['web', 'worker']);
    expect(await harness.count(`state = 'done'`)).toBe(2);
  });

  it('a repeat with new times is a duplicate row: no handler, shown by list, get and stats; retry(id) runs it', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const runs: string[] = [];
    receiver.on('app:budget:auto-shutdown:failed', (_event, context) => void runs.push(context.delivery.id));
    const first = await harness.deliver(receiver, partialFailure);
    const repeat = { ...partialFailure, timestamp: at('.900'), data: { ...partialFailure.data, failed_at: at('.900') } };
    const again = await harness.deliver(receiver, repeat, { t: nowSeconds() - 1 });
    expect(again).toMatchObject({ outcome: 'duplicate', id: expect.stringMatching(/^\d+$/), duplicateOf: first.id });

    const worker = harness.work(receiver, FAST);
    await harness.settle();
    await worker.drain();
    expect(runs).toEqual([first.id]);

    const page = await harness.inbox.list({ state: 'duplicate' });
    expect(page.deliveries.map((delivery) => [delivery.id, delivery.state, delivery.duplicateOf])).toEqual([
      [again.id, 'duplicate', first.id],
    ]);
    const detail = await harness.inbox.get(again.id!);
    expect(detail).toMatchObject({ state: 'duplicate', duplicateOf: first.id, attempts: 0, runAt: null, tickId: TICK });
    expect(Buffer.from(detail!.body).toString()).toContain(at('.900'));
    expect(await harness.inbox.stats()).toMatchObject({ done: 1, duplicate: 1, total: 2 });

    // Bulk retry leaves duplicates alone; by id or by state it runs them.
    expect(await harness.inbox.retry({})).toBe(0);
    expect(await harness.inbox.retry(again.id!)).toBe(1);
    await harness.settle();
    expect(runs).toEqual([first.id, again.id]);
    expect(await harness.count(`state = 'done'`)).toBe(2);
  });

  it('retry({ state: "duplicate" }) moves duplicates only; prune removes them, and the original going nulls the pointer', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const first = await harness.deliver(receiver, partialFailure);
    const later = (fraction: string) => ({
      ...partialFailure,
      timestamp: at(fraction),
      data: { ...partialFailure.data, failed_at: at(fraction) },
    });
    const a = await harness.deliver(receiver, later('.2'));
    const b = await harness.deliver(receiver, later('.3'));
    expect([a.duplicateOf, b.duplicateOf]).toEqual([first.id, first.id]);

    await harness.db.query(`UPDATE ${harness.table} SET state = 'done' WHERE id = $1`, [first.id]);
    await harness.db.query(`UPDATE ${harness.table} SET received_at = now() - interval '2 days' WHERE id IN ($1, $2)`, [first.id, a.id]);
    // The original is pruned (done) and so is the old duplicate; the newer duplicate stays, pointing nowhere.
    expect(await harness.inbox.prune({ before: new Date(Date.now() - 86_400_000) })).toBe(2);
    expect((await harness.inbox.get(b.id!))?.duplicateOf).toBeNull();
    expect(await harness.inbox.retry({ state: 'duplicate' })).toBe(1);
    expect((await harness.inbox.get(b.id!))?.state).toBe('pending');
  });

  it('12 bodies of one event and 3 copies of each, all at once: one pending row, 11 duplicate rows, no error', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const t = nowSeconds();
    const bodies = Array.from({ length: 12 }, (_, i) => {
      const fraction = `.${String(i + 1).padStart(2, '0')}`;
      return sign({ ...partialFailure, timestamp: at(fraction), data: { ...partialFailure.data, failed_at: at(fraction) } }, { t });
    });
    const results = await Promise.all(
      bodies.flatMap((request) => [1, 2, 3].map(() => receiver.receive({ body: request.bytes, headers: request.headers }))),
    );
    expect(results.filter((result) => result.outcome === 'accepted')).toHaveLength(1);
    expect(results.filter((result) => result.outcome === 'duplicate' && result.id !== undefined)).toHaveLength(11);
    expect(results.filter((result) => result.outcome === 'duplicate' && result.id === undefined)).toHaveLength(24);
    const states = await harness.db.query<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM ${harness.table} GROUP BY state ORDER BY state`,
    );
    expect(states).toEqual([
      { state: 'duplicate', n: 11 },
      { state: 'pending', n: 1 },
    ]);
  });
});

describe.each(CLIENT_KINDS)('same-event duplicates across a migration (%s)', (kind) => {
  it('migrate() takes a version-1 table forward: its rows stay, run, and keep their keys', async () => {
    const db = await openDatabase(kind);
    try {
      const names = resolveTableNames(db.table);
      await db.query(migrationsTableSql(names));
      for (const statement of MIGRATIONS[0]!.sql(names).split(/;\s*\n/)) await db.query(statement);
      await db.query(`INSERT INTO ${names.migrations} (version, name) VALUES (1, 'deliveries and attempts')`);
      const body = JSON.stringify(partialFailure);
      await db.query(
        `INSERT INTO ${names.deliveries} (body, signature, signed_at, secret_index, action, event_time, event_ns, app, tick_id, replay_key,
                                          event_key, state, run_at)
         VALUES ($1, 't=1,v1=00', 1, 0, 'app:budget:auto-shutdown:failed', $2, 1777285800100000000, 'billing-api', $3, 'replay:1:x',
                 $4, 'pending', now())`,
        [Buffer.from(body), at('.100'), TICK, `event:app:budget:auto-shutdown:failed:${TICK}`],
      );
      const inbox = createInbox({ database: db.database as unknown, table: db.table });
      expect(await inbox.migrate()).toEqual({ applied: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14], version: 14 });
      const [row] = (await inbox.list()).deliveries;
      expect(row).toMatchObject({ state: 'pending', duplicateOf: null, tickId: TICK });
      const columns = await db.query<{ body_key: string }>(`SELECT body_key FROM ${names.deliveries}`);
      expect(columns).toEqual([{ body_key: 'replay:1:x' }]);
    } finally {
      await db.close();
    }
  });
});
