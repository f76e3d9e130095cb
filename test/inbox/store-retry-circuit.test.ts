// Deliveries waiting for the database wait as one queue (issue 18, point 4): while it is away one
// of them at a time tries, and when it answers they are all stored at once, as many at a time as
// the pool holds; before the first failure is known, no more try at once than the pool holds (issue 25). Independent backoff loops took a pool checkout (or a new connection) per waiting
// delivery per step, and all landed on the pool together when the database came back.
// Real PostgreSQL behind a TCP proxy the test stops and resumes; the shared server is untouched.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type ReceiverLogRecord } from '../../src/index.js';
import { createInbox } from '../../src/inbox.js';
import { createSignedRequestSync, createTestEvent } from '../../src/testing/index.js';
import { openDatabase, POSTGRES_URL } from './databases.js';
import { startTcpProxy } from './fixtures/tcp-proxy.mjs';

const ACTION = 'app:budget:auto-shutdown:fired';
const secret = randomBytes(32).toString('hex');
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('300 deliveries in flight during an outage', () => {
  it('are held with one probe at a time, then all stored within seconds of the database coming back', { timeout: 40_000 }, async () => {
    const db = await openDatabase('pg');
    cleanups.push(() => db.close());
    await createInbox({ database: db.database as unknown, table: db.table }).migrate();
    const target = new URL(POSTGRES_URL);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => proxy.close());
    const pool = new pg.Pool({ connectionString: proxy.url(POSTGRES_URL), max: 8, connectionTimeoutMillis: 2000 });
    pool.on('error', () => {});
    cleanups.push(() => pool.end());
    // Every checkout the inbox asks of the pool: each is a new connection while the database is away.
    let checkouts = 0;
    const connect = pool.connect.bind(pool) as (callback: (...args: unknown[]) => void) => void;
    (pool as unknown as { connect: typeof connect }).connect = (callback) => {
      checkouts++;
      connect(callback);
    };
    const records: ReceiverLogRecord[] = [];
    const inbox = createInbox({ database: pool as unknown, table: db.table, storeRetry: { maxWaitMs: 20_000 } });
    const receiver = createReceiver<unknown>({ secrets: secret, inbox, logger: (record) => records.push(record) });

    proxy.stop();
    const ticks = Array.from({ length: 300 }, (_, i) => `circuit-${process.pid}-${i}-${randomBytes(3).toString('hex')}`);
    const answers = ticks.map((tickId) => {
      const request = createSignedRequestSync(createTestEvent(ACTION, { data: { tick_id: tickId } }), { secrets: secret });
      return receiver.receive({ body: request.bytes, headers: request.headers });
    });
    // The first attempts (as many as the pool has connections, all refused) are over within a
    // second; then only probes.
    await sleep(1000);
    const afterFirstAttempts = checkouts;
    await sleep(2000);
    const checkoutsWhileHeld = checkouts - afterFirstAttempts;
    const resumed = Date.now();
    await proxy.resume();
    const results = await Promise.all(answers);
    const drainedMs = Date.now() - resumed;

    expect(results.map((result) => result.outcome)).toEqual(ticks.map(() => 'accepted'));
    const rows = await db.query<{ tick_id: string }>(`SELECT tick_id FROM ${db.table}`);
    expect(rows.map((row) => row.tick_id).sort()).toEqual([...ticks].sort());
    // Not one first attempt each (300 checkouts, issue 25): 8 at once, the pool's size, before the
    // first failure is known; then one probe per backoff step (50 ms doubling to 1 s). Two seconds
    // of 300 independent backoff loops took 600 or more checkouts.
    expect(afterFirstAttempts).toBeGreaterThanOrEqual(8);
    expect(afterFirstAttempts).toBeLessThanOrEqual(8 + 6);
    expect(checkoutsWhileHeld).toBeLessThanOrEqual(10);
    // A probe within 1 s of the database coming back, then 300 INSERTs on 8 connections.
    expect(drainedMs).toBeLessThan(8000);
    const ended = records.filter((record) => record.event === 'inbox_outage_ended');
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ level: 'info', refused: 0 });
    expect(ended[0]!.waited).toBeGreaterThanOrEqual(250);
  });
});
