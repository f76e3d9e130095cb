import fc from 'fast-check';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { setUp } from '../../kit/setup.js';
import { resolveTableNames } from '../../../src/inbox/schema/table-name.js';
import { workerSql } from '../../../src/inbox/work/sql.js';
import { openInbox, type InboxHarness } from '../helpers.js';
import { SCENARIO_KINDS } from '../databases.js';

/**
 * The per-app claim statement itself: it must take exactly the rows the definition allows (each
 * app's first unfinished delivery, none while the app runs), and find them without reading an
 * app's backlog. What handlers see: order.test.ts.
 */
setUp();

type OnFailure = 'hold' | 'skip';
const STATES = ['pending', 'running', 'done', 'dead'] as const;

interface StoredRow {
  readonly app: string | null;
  readonly state: (typeof STATES)[number];
  /** null: no run_at, which no pending row has in practice, and none is due. */
  readonly due: boolean | null;
  readonly eventNs: number;
}

/**
 * The definition, as the claim said it before it walked apps: a due pending row may start unless
 * its app has one running, or ('hold') an earlier unfinished one, or ('skip') an earlier due one.
 */
function allowedSql(table: string, onFailure: OnFailure): string {
  const earlier = `(o.event_ns, o.id) < (d.event_ns, d.id)${onFailure === 'skip' ? ' AND o.run_at <= now()' : ''}`;
  return `SELECT d.id::text AS id FROM ${table} AS d WHERE d.state = 'pending' AND d.run_at <= now()
   AND (d.app IS NULL OR NOT EXISTS (
     SELECT 1 FROM ${table} AS o WHERE o.app = d.app AND o.state IN ('pending', 'running')
        AND (o.state = 'running' OR (${earlier}))))
 ORDER BY d.event_ns, d.id LIMIT $1`;
}

/** Stores rows in their array order (ids grow with it), due an hour ago, in an hour, or without a run_at. */
async function store(harness: InboxHarness, rows: readonly StoredRow[]): Promise<void> {
  // DELETE, not TRUNCATE: a few rows go at once, where TRUNCATE makes every index's files anew (hundreds of runs).
  await harness.db.query(`DELETE FROM ${harness.table}`);
  if (rows.length === 0) return;
  const input = rows.map((row, i) => ({ app: row.app, state: row.state, due: row.due, event_ns: row.eventNs, n: i }));
  await harness.db.query(
    `INSERT INTO ${harness.table} (body, signature, signed_at, secret_index, action, event_time, event_ns, app, body_key, state, run_at)
     SELECT '\\x00'::bytea, 's', 0, 0, 'app:budget:cap', 't', i.event_ns, i.app, 'body:' || gen_random_uuid(), i.state,
            now() + CASE WHEN i.due THEN interval '-1 hour' WHEN NOT i.due THEN interval '1 hour' END
       FROM jsonb_to_recordset($1::text::jsonb) AS i(app text, state text, due boolean, event_ns bigint, n integer) ORDER BY i.n`,
    [JSON.stringify(input)],
  );
}

const storedRow = fc.record({
  app: fc.constantFrom('a', 'b', 'c', null),
  state: fc.constantFrom(...STATES),
  due: fc.constantFrom(true, false, null),
  eventNs: fc.integer({ min: 1, max: 4 }), // ties: the id decides
});

for (const kind of SCENARIO_KINDS) {
  describe(`the per-app claim (${kind})`, () => {
    for (const onFailure of ['hold', 'skip'] as const) {
      it(`'${onFailure}': takes exactly the rows the definition allows, in event order`, async () => {
        const harness = await openInbox(kind);
        const names = resolveTableNames(harness.table);
        // The claim first asks the earliest due rows one by one, and walks the apps when they are not
        // enough: with as few rows as here, only a small first batch (or none) reaches the walk.
        const claims = new Map(
          [undefined, 0, 1, 2, 3, 5].map((early) => [early, workerSql(names, { order: 'per-app', onFailure, earlyRows: early }).claim]),
        );
        const allowed = allowedSql(names.deliveries, onFailure);
        await fc.assert(
          fc.asyncProperty(
            fc.array(storedRow, { maxLength: 12 }),
            fc.integer({ min: 1, max: 6 }),
            fc.constantFrom(...claims.keys()),
            async (rows, limit, earlyRows) => {
              await store(harness, rows);
              const expected = await harness.db.query<{ id: string }>(allowed, [limit]);
              const claimed = await harness.db.query<{ id: string }>(claims.get(earlyRows)!, [limit, 'property-worker', 60]);
              expect(claimed.map((row) => row.id)).toEqual(expected.map((row) => row.id));
            },
          ),
          { numRuns: kind === 'pg' ? 300 : 100 },
        );
      }, 120_000);
    }
  });
}

/** Rows the statement read from the deliveries table, from its plan: every scan node's rows, kept or filtered out. */
function rowsRead(node: Record<string, unknown>, table: string): number {
  const loops = Number(node['Actual Loops'] ?? 1);
  const own =
    node['Relation Name'] === table
      ? (Number(node['Actual Rows'] ?? 0) +
          Number(node['Rows Removed by Filter'] ?? 0) +
          Number(node['Rows Removed by Index Recheck'] ?? 0)) *
        loops
      : 0;
  const children = (node['Plans'] as Record<string, unknown>[] | undefined) ?? [];
  return own + children.reduce((sum, child) => sum + rowsRead(child, table), 0);
}

describe('one app with a deep backlog (pg)', () => {
  for (const onFailure of ['hold', 'skip'] as const) {
    it(`'${onFailure}': the other apps are claimed in as many claims as their rows need, none reading the backlog`, async () => {
      const harness = await openInbox('pg');
      const names = resolveTableNames(harness.table);
      const claim = workerSql(names, { order: 'per-app', onFailure }).claim;
      // App A: 3,000 deliveries older than every other app's, its first running. 20 apps of 2 each, 10 without an app.
      await harness.db.query(
        `INSERT INTO ${harness.table} (body, signature, signed_at, secret_index, action, event_time, event_ns, app, body_key, state, run_at)
         SELECT '\\x00'::bytea, 's', 0, 0, 'app:budget:cap', 't', g, 'A', 'body:a' || g, CASE WHEN g = 1 THEN 'running' ELSE 'pending' END, now()
           FROM generate_series(1, 3000) AS g
         UNION ALL
         SELECT '\\x00'::bytea, 's', 0, 0, 'app:budget:cap', 't', 10000 + g, 'app-' || (g % 20), 'body:o' || g, 'pending', now()
           FROM generate_series(1, 40) AS g
         UNION ALL
         SELECT '\\x00'::bytea, 's', 0, 0, 'app:budget:cap', 't', 20000 + g, NULL, 'body:n' || g, 'pending', now()
           FROM generate_series(1, 10) AS g`,
      );
      await harness.db.query(`ANALYZE ${harness.table}`);
      const client = await (harness.db.database as pg.Pool).connect();
      try {
        const claimedApps: (string | null)[] = [];
        let claims = 0;
        while (claimedApps.length < 50) {
          if (++claims > 4) break;
          await client.query('BEGIN');
          const explained = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${claim}`, [16, 'backlog-worker', 60]);
          const plan = (explained.rows[0] as { 'QUERY PLAN': [{ Plan: Record<string, unknown> }] })['QUERY PLAN'][0].Plan;
          // A few rows per app with unfinished rows (21 of them) and per row claimed; the old claim read all 3,000 of A's.
          expect(rowsRead(plan, 'deliveries')).toBeLessThan(400); // 90 to 175 here
          const claimed = await client.query<{ app: string | null }>(`SELECT app FROM ${harness.table} WHERE locked_by = 'backlog-worker'`);
          claimedApps.push(...claimed.rows.map((row) => row.app));
          // Their handlers finished: their apps' next rows may start.
          await client.query(`UPDATE ${harness.table} SET state = 'done', locked_by = NULL WHERE locked_by = 'backlog-worker'`);
          await client.query('COMMIT');
        }
        expect(claims).toBe(4); // 16, 16, 16, then the last 2: never one of A's, which waits for its running row
        expect(claimedApps).toHaveLength(50);
        expect(claimedApps).not.toContain('A');
        expect(claimedApps.filter((app) => app === null)).toHaveLength(10);
      } finally {
        await client.query('ROLLBACK').catch(() => {});
        client.release();
      }
    }, 60_000);
  }
});
