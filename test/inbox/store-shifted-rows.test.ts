// A client answer that is not the statement's own. postgres.js 3.4.9 with `fetch_types: false` (as
// the proxied fixture has it) keeps the index of a connection's next row across a reconnect when the
// connection was cut after a row and before the statement's end: the next statement's rows land one place on, `[0]` reads undefined (seen under
// load in store-retry.test.ts as "Cannot read properties of undefined (reading 'id')", and, worse,
// it reads an INSERT ... RETURNING that stored a row as one that stored nothing). The driver takes
// the rows where they are; a statement that must return a row and comes back without one is tried
// again, never read as "stored" or "duplicate". Real PostgreSQL, real postgres.js, a TCP proxy.
import { randomBytes } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, type ReceiverLogRecord } from '../../src/index.js';
import { createInbox } from '../../src/inbox.js';
import { postgresJsDriver, type PostgresJsLike } from '../../src/database/postgres-js.js';
import { createSignedRequestSync, createTestEvent } from '../../src/testing/index.js';
import { openDatabase } from './databases.js';
import { behindProxy } from './fixtures/proxied.js';

const ACTION = 'app:budget:auto-shutdown:fired';
const secret = randomBytes(32).toString('hex');

/** An event with its own tick_id at `timestamp`: the same tick at another time is the same event, other bytes. */
function signedAt(tickId: string, timestamp: string) {
  return createSignedRequestSync(createTestEvent(ACTION, { timestamp, data: { tick_id: tickId } }), { secrets: secret });
}

const newTick = () => `tick-${process.pid}-${randomBytes(6).toString('hex')}`;

/** postgres.js through the proxy with one connection, so that the cut and the next statement share it. */
async function oneConnection() {
  const { db, proxy, database } = await behindProxy('postgres', 1);
  const sql = database as PostgresJsLike;
  /** A statement with rows whose answer the proxy cuts after its first row. */
  const cutMidAnswer = async () => {
    proxy.cutAfterNextRow();
    await expect(sql.unsafe('SELECT g AS n FROM generate_series(1, 3) AS g', [], { prepare: true })).rejects.toMatchObject({
      code: 'CONNECTION_CLOSED',
    });
    expect(proxy.cutReplies).toBe(1);
  };
  return { db, sql, cutMidAnswer };
}

describe('postgres.js: a connection cut after a row of an answer', () => {
  it('the next answer on that connection is its own rows, from the first place', { timeout: 20_000 }, async () => {
    const { sql, cutMidAnswer } = await oneConnection();
    const driver = postgresJsDriver(sql, true);
    expect(await driver.query('SELECT 1 AS warm')).toEqual([{ warm: 1 }]);
    await cutMidAnswer();
    // postgres.js's own result here is [<hole>, { id: 7 }].
    expect(await driver.query('SELECT $1::int AS id', [7])).toEqual([{ id: 7 }]);
    expect(await driver.query('SELECT $1::int AS id', [8])).toEqual([{ id: 8 }]);
  });

  it('a delivery stored next on that connection is answered accepted with its row, not duplicate', { timeout: 20_000 }, async () => {
    const { db, sql, cutMidAnswer } = await oneConnection();
    const inbox = createInbox({ database: sql, table: db.table });
    const receiver = createReceiver<unknown>({ secrets: secret, inbox });
    const receive = (request: ReturnType<typeof signedAt>) => receiver.receive({ body: request.bytes, headers: request.headers });
    expect((await receive(signedAt(newTick(), new Date().toISOString()))).outcome).toBe('accepted');
    await cutMidAnswer();
    const tickId = newTick();
    const result = await receive(signedAt(tickId, new Date().toISOString()));
    expect(result.outcome).toBe('accepted');
    const rows = await db.query<{ id: string; state: string }>(`SELECT id::text AS id, state FROM ${db.table} WHERE tick_id = $1`, [
      tickId,
    ]);
    expect(rows).toEqual([{ id: result.id, state: 'pending' }]);
  });
});

describe('the duplicate statement answered without its row', () => {
  it(
    'the delivery waits for a store that answers (RESULT_ROW_MISSING) and is the duplicate it is, stored once',
    { timeout: 20_000 },
    async () => {
      const db = await openDatabase('postgres');
      onTestFinished(() => db.close());
      const sql = db.database as unknown as PostgresJsLike;
      let lost = 0;
      // The real client; the first answer of the duplicate statement (which ran, and committed) is lost on the way back.
      const losing: PostgresJsLike = Object.assign(() => {}, {
        options: sql.options ?? {},
        begin: sql.begin.bind(sql),
        listen: sql.listen.bind(sql),
        async unsafe(text: string, params?: readonly unknown[], options?: { prepare?: boolean }) {
          const rows = await sql.unsafe(text, params, options);
          if (!text.startsWith('WITH original AS') || lost > 0) return rows;
          lost++;
          return [];
        },
      });
      const inbox = createInbox({ database: losing, table: db.table });
      await inbox.migrate();
      const records: ReceiverLogRecord[] = [];
      const receiver = createReceiver<unknown>({ secrets: secret, inbox, logger: (record) => records.push(record) });
      const receive = (request: ReturnType<typeof signedAt>) => receiver.receive({ body: request.bytes, headers: request.headers });

      const tickId = newTick();
      const first = await receive(signedAt(tickId, '2026-04-27T10:30:00.100Z'));
      expect(first.outcome).toBe('accepted');
      // The same event at another time: other bytes, the same event key.
      const again = await receive(signedAt(tickId, '2026-04-27T10:30:00.900Z'));
      expect(lost).toBe(1);
      expect(again).toMatchObject({ outcome: 'duplicate', id: expect.stringMatching(/^\d+$/) as string, duplicateOf: first.id });
      const rows = await db.query<{ id: string; state: string; duplicate_of: string | null }>(
        `SELECT id::text AS id, state, duplicate_of::text AS duplicate_of FROM ${db.table} WHERE tick_id = $1 ORDER BY id`,
        [tickId],
      );
      expect(rows).toEqual([
        { id: first.id, state: 'pending', duplicate_of: null },
        { id: again.id, state: 'duplicate', duplicate_of: first.id },
      ]);
      // Retried as an outage of one attempt, and said so.
      expect(records.filter((record) => record.event === 'inbox_outage')).toMatchObject([{ code: 'RESULT_ROW_MISSING' }]);
      expect(records.filter((record) => record.event === 'inbox_outage_ended')).toMatchObject([{ refused: 0, waited: 1 }]);
    },
  );
});
