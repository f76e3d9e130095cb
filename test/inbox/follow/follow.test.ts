/**
 * followInbox in this process, on a real PostgreSQL: one connection held, the poll when no LISTEN
 * is possible, a body too large for its batch read on its own, and stopping on a signal.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { holdOneConnection } from '../../../src/inbox/follow/connection.js';
import { followInbox, type FollowedDelivery } from '../../../src/inbox/follow/follow.js';
import { INLINE_BODY_BYTES } from '../../../src/inbox/follow/read.js';
import { createInbox } from '../../../src/inbox.js';
import { resolveTableNames } from '../../../src/inbox/schema/table-name.js';
import { createReceiver } from '../../../src/receiver/create-receiver.js';
import { createSignedRequestSync } from '../../../src/testing/signed-request.js';
import { POSTGRES_URL, databaseForFile, type TestDatabase } from '../databases.js';

const KEY = 'follow-test-key';
let db: TestDatabase<'pg'>;
databaseForFile('pg', (opened) => (db = opened));

function event(index: number, padding = ''): string {
  return JSON.stringify({
    action: 'app:from-the-future',
    status: 'success',
    timestamp: `2026-03-01T00:00:${String(index).padStart(2, '0')}Z`,
    data: { app: `app-${index}`, padding },
  });
}

describe('followInbox', { timeout: 30_000 }, () => {
  it('holds one connection of a pool, for its statements and its LISTEN', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1, connectionTimeoutMillis: 5000 });
    try {
      const held = await holdOneConnection(pool, () => Promise.reject(new Error('not used')));
      expect(held.source.listen).toBeTypeOf('function');
      const unlisten = await held.source.listen!(
        'follow_test_channel',
        () => {},
        () => {},
      );
      expect(await held.source.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(pool.totalCount).toBe(1);
      await unlisten();
      held.release();
      held.release(); // harmless
      expect(pool.idleCount).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('polls a source that cannot LISTEN, reads a large body on its own, and stops on the signal', async () => {
    const table = `${db.schema}.follow`;
    const inbox = createInbox({ database: db.database, table, notify: false });
    await inbox.migrate();
    const receiver = createReceiver({ secrets: KEY, inbox });
    const store = async (text: string) =>
      expect((await receiver.receive(createSignedRequestSync(text, { secrets: KEY }))).outcome).toBe('ignored');
    const large = event(2, 'x'.repeat(INLINE_BODY_BYTES + 10));
    const seen: FollowedDelivery[] = [];
    const stop = new AbortController();
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    // A client of no known shape: statements only, so following polls.
    const held = await holdOneConnection({}, async (text, params) => (await db.database.query(text, params as unknown[])).rows);
    expect(held.source.listen).toBeUndefined();
    const following = followInbox(
      held.source,
      { names: resolveTableNames(table), filter: {}, after: 0n, once: false, signal: stop.signal, pollMs: 20, onReady: ready },
      async (delivery) => {
        seen.push(delivery);
        if (seen.length === 3) stop.abort();
        return 'next';
      },
    );
    await started;
    await store(event(1));
    await store(large);
    await store(event(3));
    const result = await following;
    expect(result).toEqual({ forwarded: 3, failed: 0, lastId: 3n, resumeFrom: 4n, stoppedBy: 'signal' });
    expect(seen.map((delivery) => [delivery.id, delivery.app, delivery.state])).toEqual([
      [1n, 'app-1', 'ignored'],
      [2n, 'app-2', 'ignored'],
      [3n, 'app-3', 'ignored'],
    ]);
    expect(Buffer.from(seen[1]!.body).toString('utf8')).toBe(large);
  });

  it('stopped while an id below the last one forwarded may still commit: the resume id is that gap, not past it', async () => {
    const table = `${db.schema}.gapped`;
    const inbox = createInbox({ database: db.database, table, notify: false });
    await inbox.migrate();
    const receiver = createReceiver({ secrets: KEY, inbox });
    await receiver.receive(createSignedRequestSync(event(1), { secrets: KEY }));
    // Id 2 drawn and not (yet) committed, as by a delivery still being stored.
    await db.query(`SELECT nextval(pg_get_serial_sequence('${table}', 'id'))`);
    await receiver.receive(createSignedRequestSync(event(3), { secrets: KEY }));
    const held = await holdOneConnection(db.database, () => Promise.reject(new Error('not used')));
    const stop = new AbortController();
    try {
      const result = await followInbox(
        held.source,
        { names: resolveTableNames(table), filter: {}, after: 0n, once: false, signal: stop.signal, pollMs: 20 },
        async (delivery) => {
          if (delivery.id === 3n) stop.abort();
          return 'next';
        },
      );
      expect(result).toEqual({ forwarded: 2, failed: 0, lastId: 3n, resumeFrom: 2n, stoppedBy: 'signal' });
    } finally {
      held.release();
    }
  });

  it('stops where forward says stop: that delivery is the one to resume from', async () => {
    const table = `${db.schema}.stopping`;
    const inbox = createInbox({ database: db.database, table, notify: false });
    await inbox.migrate();
    const receiver = createReceiver({ secrets: KEY, inbox });
    for (const index of [1, 2, 3]) await receiver.receive(createSignedRequestSync(event(index), { secrets: KEY }));
    const held = await holdOneConnection(db.database, () => Promise.reject(new Error('not used')));
    try {
      const result = await followInbox(
        held.source,
        { names: resolveTableNames(table), filter: {}, after: 0n, once: true, signal: new AbortController().signal },
        async (delivery) => (delivery.id === 2n ? 'stop' : 'next'),
      );
      expect(result).toEqual({ forwarded: 1, failed: 0, lastId: 1n, resumeFrom: 2n, stoppedBy: 'forward' });
    } finally {
      held.release();
    }
  });
});
