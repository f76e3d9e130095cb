// Refusals counted per minute and code in <table>_refusals: exact counts per code after a flood of
// forged, stale and unparsable deliveries (through receive() and the fetch adapter), written in
// one statement per flush (every row of a flush carries its transaction's xmin), on every client.
import { describe, expect, it } from 'vitest';
import { setUp } from '../kit/setup.js';
import { createReceiver } from '../../src/index.js';
import { createInbox } from '../../src/inbox.js';
import { createFetchHandler, WebhookMountError } from '../../src/adapters/web.js';
import { openDatabase, SCENARIO_KINDS, type ClientKind, type TestDatabase } from './databases.js';
import { at, budgetEvent, nowSeconds, SECRETS, sign } from './helpers.js';
import { ManualClock, until, waitFor } from '../kit/time.js';

setUp();

const FIRED = 'app:budget:auto-shutdown:fired';
const HOUR = 3_600_000;

async function withDatabase<R>(kind: ClientKind, use: (db: TestDatabase) => Promise<R>): Promise<R> {
  const db = await openDatabase(kind);
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}

/** Rows per code (summed over minutes), and how many transactions wrote the rows now there. */
async function recorded(db: TestDatabase) {
  const rows = await db.query<{ code: string; n: string }>(
    `SELECT code, sum(count)::text AS n FROM ${db.table}_refusals GROUP BY code ORDER BY code`,
  );
  const [writes] = await db.query<{ n: string }>(`SELECT count(DISTINCT xmin::text)::text AS n FROM ${db.table}_refusals`);
  return { counts: Object.fromEntries(rows.map((row) => [row.code, Number(row.n)])), writes: Number(writes!.n) };
}

describe.each(SCENARIO_KINDS)('refusals recorded (%s)', (kind) => {
  it('counts 200 refused deliveries per code, in memory until the flush, then in one write', async () => {
    await withDatabase(kind, async (db) => {
      const inbox = createInbox({ database: db.database as unknown, table: db.table, recordRefusals: { flushIntervalMs: HOUR } });
      await inbox.migrate();
      const receiver = createReceiver({ secrets: SECRETS, inbox });
      const heard: string[] = [];
      inbox.onRefusal((code) => heard.push(code));
      const event = budgetEvent(FIRED, at('.1'));
      const refuse = async (body: Uint8Array | string, headers: Record<string, string>, code: string) =>
        expect(receiver.receive({ body, headers })).rejects.toMatchObject({ code });
      for (let i = 0; i < 120; i++) {
        const forged = sign({ ...event, data: { ...event.data, n: String(i) } }, { secrets: 'forged-key' });
        await refuse(forged.bytes, forged.headers, 'signature_mismatch');
      }
      for (let i = 0; i < 40; i++) {
        const stale = sign(event, { t: nowSeconds() - 3600 });
        await refuse(stale.bytes, stale.headers, 'timestamp_too_old');
      }
      for (let i = 0; i < 30; i++) {
        const garbled = sign('{"action": ');
        await refuse(garbled.bytes, garbled.headers, 'invalid_json');
      }
      // Refused by the adapter before the receiver sees them: too large, not JSON.
      const handler = createFetchHandler(receiver, { maxBodyBytes: 64 });
      const post = (body: string, type = 'application/json') =>
        handler(new Request('http://receiver.test/webhooks', { method: 'POST', headers: { 'content-type': type }, body }));
      for (let i = 0; i < 6; i++) expect((await post('x'.repeat(100))).status).toBe(413);
      for (let i = 0; i < 4; i++) expect((await post('{}', 'text/plain')).status).toBe(415);

      // Nothing written yet: the flush is an hour away.
      expect(await recorded(db)).toEqual({ counts: {}, writes: 0 });
      const expected = {
        signature_mismatch: 120,
        timestamp_too_old: 40,
        invalid_json: 30,
        payload_too_large: 6,
        unsupported_media_type: 4,
      };
      expect(Object.fromEntries(inbox.refusalTotals())).toEqual(expected);
      expect(heard).toHaveLength(200);

      await inbox.close();
      expect(await recorded(db)).toEqual({ counts: expected, writes: 1 });
      expect(await inbox.refusals()).toEqual([
        { code: 'signature_mismatch', count: 120 },
        { code: 'timestamp_too_old', count: 40 },
        { code: 'invalid_json', count: 30 },
        { code: 'payload_too_large', count: 6 },
        { code: 'unsupported_media_type', count: 4 },
      ]);
      const minutes = await inbox.refusals({ perMinute: true });
      expect(minutes.reduce((sum, row) => sum + row.count, 0)).toBe(200);
      for (const row of minutes) expect(row.minute.getTime() % 60_000).toBe(0);
      expect(await inbox.refusals({ since: new Date(Date.now() + 120_000) })).toEqual([]);

      // A second batch adds to the same rows, in one more write.
      for (let i = 0; i < 5; i++) {
        const forged = sign(event, { secrets: 'forged-key' });
        await refuse(forged.bytes, forged.headers, 'signature_mismatch');
      }
      await inbox.close();
      const after = await recorded(db);
      expect(after.counts).toEqual({ ...expected, signature_mismatch: 125 });
      expect(after.writes).toBeLessThanOrEqual(2);
    });
  });

  it('writes on its own timer, and keeps counts across a failed write (the table missing) until it works', async () => {
    await withDatabase(kind, async (db) => {
      const clock = new ManualClock();
      const inbox = createInbox({ database: db.database as unknown, table: db.table, recordRefusals: { flushIntervalMs: 30 }, clock });
      const receiver = createReceiver({ secrets: SECRETS, inbox });
      const forged = sign(budgetEvent(FIRED, at('.1')), { secrets: 'forged-key' });
      for (let i = 0; i < 3; i++)
        await expect(receiver.receive({ body: forged.bytes, headers: forged.headers })).rejects.toMatchObject({
          code: 'signature_mismatch',
        });
      // Not migrated yet: the timed writes fail, and the counts wait in memory for the timer, set again each time.
      const flushTimers = () => clock.live.filter((timer) => timer.ms === 30);
      for (let i = 0; i < 2; i++) {
        expect(flushTimers()).toHaveLength(1);
        clock.fire(30);
        await until(() => expect(flushTimers()).toHaveLength(1));
      }
      await inbox.migrate();
      clock.fire(30);
      const { counts } = await waitFor(
        async () => {
          const now = await recorded(db);
          return now.counts['signature_mismatch'] === 3 ? now : undefined;
        },
        15_000,
        () => 'the timed write',
      );
      expect(counts).toEqual({ signature_mismatch: 3 });
      await inbox.close();
    });
  });
});

describe('refusals an adapter reports (receiver.reportRefusal)', () => {
  it("an adapter of your own: counted in the inbox's refusals and written with the others; a mount error also reaches onError", async () => {
    await withDatabase('pg', async (db) => {
      const inbox = createInbox({ database: db.database, table: db.table, recordRefusals: { flushIntervalMs: HOUR } });
      await inbox.migrate();
      const receiver = createReceiver({ secrets: SECRETS, inbox });
      const errors: unknown[] = [];
      receiver.onError((error) => void errors.push(error));
      for (let i = 0; i < 3; i++) await receiver.reportRefusal('method_not_allowed');
      const consumed = new WebhookMountError('the body was consumed by a parser');
      await receiver.reportRefusal(consumed);
      expect(errors).toEqual([consumed]);
      expect(Object.fromEntries(inbox.refusalTotals())).toEqual({ method_not_allowed: 3, raw_body_unavailable: 1 });
      await inbox.close();
      expect(await recorded(db)).toEqual({ counts: { method_not_allowed: 3, raw_body_unavailable: 1 }, writes: 1 });
    });
  });
});

describe('refusals not recorded', () => {
  it('recordRefusals: false counts nothing and writes nothing; a bad option is a typed error', async () => {
    await withDatabase('pg', async (db) => {
      const inbox = createInbox({ database: db.database, table: db.table, recordRefusals: false });
      await inbox.migrate();
      const receiver = createReceiver({ secrets: SECRETS, inbox });
      const forged = sign(budgetEvent(FIRED, at('.1')), { secrets: 'forged-key' });
      await expect(receiver.receive({ body: forged.bytes, headers: forged.headers })).rejects.toMatchObject({ code: 'signature_mismatch' });
      await inbox.close();
      expect(inbox.refusalTotals().size).toBe(0);
      expect(await recorded(db)).toEqual({ counts: {}, writes: 0 });
      expect(() => createInbox({ database: db.database, recordRefusals: { flushIntervalMs: 0 } })).toThrow(RangeError);
      expect(() => createInbox({ database: db.database, recordRefusals: 'yes' as never })).toThrow(TypeError);
    });
  });
});
