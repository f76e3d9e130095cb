// order: 'per-app' across real processes: two worker processes, each of concurrency 4, share the
// deliveries of sixteen apps; each handler records when it started and ended through
// context.transaction. No two deliveries of one app may overlap, and each app's run in event order.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { createInbox } from '../../src/inbox.js';
import { createSignedRequestSync, createTestEvent } from '../../src/testing/index.js';
import { openDatabase, POSTGRES_URL, type TestDatabase } from './databases.js';
import { killAllChildren, startChild, waitFor } from './fixtures/children.js';

const ACTION = 'app:budget:auto-shutdown:fired';
// More apps than one worker holds at once (concurrency 4 + claimAhead 8 = 12 claimed, each holding
// its app): with 5, one worker could hold every app and leave the other nothing to take.
const APPS = Array.from({ length: 16 }, (_, i) => `app-${String(i).padStart(2, '0')}`);
const PER_APP = 3;
let db: TestDatabase<'pg'> | undefined;

afterEach(async () => {
  await killAllChildren();
  await db?.close();
  db = undefined;
});

interface Span {
  id: string;
  app: string;
  worker: string;
  event_ns: string;
  started: number;
  ended: number;
}

describe("order: 'per-app' across processes", () => {
  it('two worker processes never run two deliveries of one app at once, and run each app in event order', { timeout: 60_000 }, async () => {
    db = await openDatabase('pg');
    await createInbox({ database: db.database, table: db.table }).migrate();
    const effects = `${db.schema}.spans`;
    await db.query(
      `CREATE TABLE ${effects} (delivery_id bigint PRIMARY KEY, worker text NOT NULL, app text NOT NULL, started_at timestamptz NOT NULL, ended_at timestamptz)`,
    );
    // Each worker's handlers wait until both processes have started one: under load the first
    // to start could otherwise drain every delivery before the second is working.
    const arrived = `${db.schema}.arrived`;
    await db.query(`CREATE TABLE ${arrived} (worker text PRIMARY KEY)`);
    const secret = randomBytes(32).toString('hex');
    // Stored newest event first, the apps interleaved: arrival order is the reverse of event order.
    const receiver = createReceiver({ secrets: secret, inbox: createInbox({ database: db.database, table: db.table }) });
    for (let i = PER_APP - 1; i >= 0; i--) {
      for (const app of APPS) {
        const event = createTestEvent(ACTION);
        event.data.app = app;
        event.timestamp = `2026-04-27T10:30:0${i}.${String(APPS.indexOf(app)).padStart(9, '0')}Z`;
        const request = createSignedRequestSync(event, { secrets: secret });
        expect((await receiver.receive({ body: request.body, headers: request.headers })).outcome).toBe('accepted');
      }
    }
    const env = {
      RWT_DATABASE_URL: POSTGRES_URL,
      RWT_TABLE: db.table,
      RWT_SECRET: secret,
      RWT_EFFECTS: effects,
      RWT_HANDLER: 'span',
      RWT_HANDLER_MS: '5-25',
      RWT_BARRIER: `${arrived}:2`,
      RWT_WORK: JSON.stringify({ order: 'per-app', concurrency: 4, pollIntervalMs: 50 }),
    };
    const children = [startChild('work.mjs', env), startChild('work.mjs', env)];
    await Promise.all(children.map((child) => child.message('working')));
    const total = APPS.length * PER_APP;
    await waitFor(
      async () => Number((await db!.query<{ n: string }>(`SELECT count(*) AS n FROM ${db!.table} WHERE state = 'done'`))[0]!.n) === total,
      45_000,
      () => `every delivery done\n${children.map((child) => child.output()).join('\n')}`,
    );
    const spans = await db.query<Span>(
      `SELECT s.delivery_id::text AS id, s.app, s.worker, d.event_ns::text AS event_ns,
              extract(epoch FROM s.started_at)::float8 AS started, extract(epoch FROM s.ended_at)::float8 AS ended
         FROM ${effects} s JOIN ${db.table} d ON d.id = s.delivery_id ORDER BY s.started_at`,
    );
    expect(spans).toHaveLength(total);
    expect(new Set(spans.map((span) => span.worker)).size).toBe(2); // both processes took part
    for (const app of APPS) {
      const ofApp = spans.filter((span) => span.app === app);
      for (let i = 1; i < ofApp.length; i++) {
        expect(ofApp[i]!.started, `${app}: delivery ${ofApp[i]!.id} started before ${ofApp[i - 1]!.id} ended`).toBeGreaterThan(
          ofApp[i - 1]!.ended,
        );
      }
      const eventOrder = [...ofApp].sort((a, b) => (BigInt(a.event_ns) < BigInt(b.event_ns) ? -1 : 1)).map((span) => span.id);
      expect(ofApp.map((span) => span.id)).toEqual(eventOrder);
    }
    // The apps did run side by side: some two spans of different apps overlap.
    const overlapping = spans.some((a, i) => spans.slice(i + 1).some((b) => b.app !== a.app && b.started < a.ended));
    expect(overlapping).toBe(true);
  });
});
