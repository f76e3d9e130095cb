import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WebhookPayloadError, WebhookVerificationError } from '../../src/index.js';
import { createInbox, schemaSql, WebhookInboxError } from '../../src/inbox.js';
import { CLIENT_KINDS, openDatabase, pgPoolTo, postgresTo, type ClientKind, type TestDatabase } from './databases.js';
import { at, budgetEvent, bytesOf, inboxSuiteSetup, nowSeconds, openInbox, sign } from './helpers.js';

// The inbox's schema and its write path (receive → one committed row), on every client.

inboxSuiteSetup();

const TICK = 'tick-2026-04-27T10:30:00Z-9fe533fc297241caa6ca5760dc9b9836';
const INDEXES = ['event_order', 'due', 'leases', 'by_state', 'by_action', 'by_app', 'received'];

/** Columns, indexes and constraints of the schema a test owns, with the schema's name taken out. */
async function catalogue(db: TestDatabase) {
  const strip = (text: string) => text.split(`${db.schema}.`).join('').split(`"${db.schema}".`).join('');
  const columns = await db.query(
    `SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity FROM information_schema.columns
      WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
    [db.schema],
  );
  const indexes = await db.query<{ indexname: string; indexdef: string }>('SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname', [db.schema]);
  const constraints = await db.query<{ conname: string; def: string }>(
    'SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE connamespace = $1::regnamespace ORDER BY conname',
    [db.schema],
  );
  return {
    columns,
    indexes: indexes.map(({ indexname, indexdef }) => [indexname, strip(indexdef)]),
    constraints: constraints.map(({ conname, def }) => [conname, strip(def)]),
  };
}

/** Runs a multi-statement script through the client's own API. */
async function runScript(db: TestDatabase, script: string): Promise<void> {
  const database = db.database as unknown;
  if (db.kind === 'pg') await (database as ReturnType<typeof pgPoolTo>).query(script);
  else if (db.kind === 'postgres') {
    // The script has its own BEGIN/COMMIT: postgres.js wants one connection reserved for that.
    const reserved = await (database as ReturnType<typeof postgresTo>).reserve();
    try {
      await reserved.unsafe(script).simple();
    } finally {
      reserved.release();
    }
  }
  else await (database as { exec(text: string): Promise<unknown> }).exec(script);
}

/** Two independent clients of `kind` on the same database (PGlite has one: the same instance twice). */
function twoClients(kind: ClientKind, db: TestDatabase): { clients: unknown[]; close: () => Promise<void> } {
  if (kind === 'pg') {
    const pools = [pgPoolTo(), pgPoolTo()];
    return { clients: pools, close: async () => void (await Promise.all(pools.map((pool) => pool.end()))) };
  }
  if (kind === 'postgres') {
    const sqls = [postgresTo(), postgresTo()];
    return { clients: sqls, close: async () => void (await Promise.all(sqls.map((sql) => sql.end({ timeout: 5 })))) };
  }
  return { clients: [db.database, db.database], close: async () => {} };
}

describe.each(CLIENT_KINDS)('inbox schema (%s)', (kind) => {
  it('migrate() applies version 1 on a fresh table, then nothing, and creates the tables and indexes', async () => {
    const { inbox, db } = await openInbox(kind, { migrate: false });
    expect(await inbox.migrate()).toEqual({ applied: [1], version: 1 });
    expect(await inbox.migrate()).toEqual({ applied: [], version: 1 });

    const tables = await db.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      [db.schema],
    );
    expect(tables.map((t) => t.name)).toEqual(['deliveries', 'deliveries_attempts', 'deliveries_migrations']);
    const indexes = await db.query<{ name: string }>(`SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 AND tablename = 'deliveries'`, [db.schema]);
    expect(indexes.map((i) => i.name).sort()).toEqual(
      ['deliveries_pkey', 'deliveries_replay_key', 'deliveries_event_key', ...INDEXES.map((suffix) => `deliveries_${suffix}`)].sort(),
    );
    expect(await db.query(`SELECT version, name FROM ${db.table}_migrations`)).toEqual([{ version: 1, name: 'deliveries and attempts' }]);
  });

  it('schemaSql() creates the same schema as migrate(), recorded as version 1', async () => {
    const { db: migrated } = await openInbox(kind);
    const scripted = await openDatabase(kind);
    try {
      await runScript(scripted, schemaSql(scripted.table));
      expect(await scripted.query(`SELECT version, name FROM ${scripted.table}_migrations`)).toEqual([{ version: 1, name: 'deliveries and attempts' }]);
      expect(await catalogue(scripted)).toEqual(await catalogue(migrated));
      // migrate() recognises it, and the inbox works on it.
      const inbox = createInbox({ database: scripted.database as unknown, table: scripted.table });
      expect(await inbox.migrate()).toEqual({ applied: [], version: 1 });
    } finally {
      await scripted.close();
    }
  });

  it('migrate() from two clients at once: both succeed, one applies', async () => {
    const { db } = await openInbox(kind, { migrate: false });
    const { clients, close } = twoClients(kind, db);
    try {
      const results = await Promise.all(clients.map((database) => createInbox({ database, table: db.table }).migrate()));
      expect(results.map((result) => result.version)).toEqual([1, 1]);
      expect(results.map((result) => result.applied).sort((a, b) => a.length - b.length)).toEqual([[], [1]]);
      expect(await db.query(`SELECT version FROM ${db.table}_migrations`)).toEqual([{ version: 1 }]);
    } finally {
      await close();
    }
  });
});

describe.each(CLIENT_KINDS)('receive() with an inbox (%s)', (kind) => {
  it('commits one pending row holding the exact bytes, signature and event facts; no handler runs', async () => {
    const harness = await openInbox(kind);
    const calls: string[] = [];
    const receiver = harness.receiver();
    receiver.on('app:budget:auto-shutdown:armed', () => void calls.push('armed'));
    receiver.onAny(() => void calls.push('any'));

    // Non-ASCII (2, 3 and 4-byte UTF-8), tabs, CR LF and trailing blank lines: the bytes are the record.
    const body =
      `{ "action" : "app:budget:auto-shutdown:armed",\n\t"status":"success",  "timestamp":"${at('.123456789')}",\r\n` +
      ` "data":{"app":"billing-api","rack":"example-rack","actor":"Zoë ☃ 🚀 ops","tick_id":"${TICK}","cap_usd":"100"} }\n\n`;
    const t = nowSeconds() - 7;
    const request = sign(body, { t }); // signed with SECRET only: the receiver's second secret
    const result = await receiver.receive({ body: request.bytes, headers: request.headers });

    expect(result.outcome).toBe('accepted');
    expect(result.id).toMatch(/^[1-9][0-9]*$/);
    expect(calls).toEqual([]);
    const rows = await harness.db.query(
      `SELECT id::text AS id, body, signature, signed_at::text AS signed_at, secret_index, action, event_time, event_ns::text AS event_ns,
              app, tick_id, state, attempts, run_at IS NOT NULL AS due, replay_key, event_key, last_error
         FROM ${harness.table}`,
    );
    expect(rows).toHaveLength(1);
    const { body: storedBody, ...row } = rows[0]!;
    expect(bytesOf(storedBody).equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(row).toEqual({
      id: result.id,
      signature: request.headers['service-signature'],
      signed_at: String(t),
      secret_index: 1,
      action: 'app:budget:auto-shutdown:armed',
      event_time: '2026-04-27T10:30:00.123456789Z',
      event_ns: '1777285800123456789',
      app: 'billing-api',
      tick_id: TICK,
      state: 'pending',
      attempts: 0,
      due: true,
      replay_key: `replay:${t}:${createHash('sha256').update(body, 'utf8').digest('base64url')}`,
      event_key: `event:app:budget:auto-shutdown:armed:${TICK}`,
      last_error: null,
    });
    expect(await harness.db.query(`SELECT * FROM ${harness.attemptsTable}`)).toEqual([]);

    const stored = await harness.inbox.get(result.id!);
    expect(stored?.eventNanos).toBe(1777285800123456789n);
    expect(Buffer.from(stored!.body).equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect((stored?.event?.data as Record<string, string>)['actor']).toBe('Zoë ☃ 🚀 ops');
    expect(calls).toEqual([]);
  });

  it('stores a copy once: the same delivery again, and the same (action, tick_id) re-signed with a new t, are duplicates', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const event = budgetEvent('app:budget:auto-shutdown:fired', at('.5'), { tick_id: TICK });
    const t = nowSeconds();
    const request = sign(event, { t });

    const first = await receiver.receive({ body: request.bytes, headers: request.headers });
    expect(first.outcome).toBe('accepted');
    const again = await receiver.receive({ body: request.bytes, headers: request.headers });
    expect(again).toMatchObject({ outcome: 'duplicate' });
    expect(again.id).toBeUndefined();
    // A proxy re-sending it: new t, so a new replay key, but the same event key.
    expect((await harness.deliver(receiver, event, { t: t - 30 })).outcome).toBe('duplicate');
    // The event key alone decides, even when the body differs.
    expect((await harness.deliver(receiver, { ...event, data: { ...event.data, spend_usd: '1' } }, { t: t - 31 })).outcome).toBe('duplicate');

    expect(await harness.rows()).toHaveLength(1);
    expect((await harness.rows())[0]).toMatchObject({ signed_at: expect.anything(), state: 'pending' });
    expect(Number((await harness.rows())[0]!['signed_at'])).toBe(t);
  });

  it('20 concurrent copies of one delivery: exactly one accepted, one row', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const request = sign(budgetEvent('app:budget:cap', at('.25')));
    const results = await Promise.all(Array.from({ length: 20 }, () => receiver.receive({ body: request.bytes, headers: request.headers })));
    const outcomes = results.map((result) => result.outcome);
    expect(outcomes.filter((outcome) => outcome === 'accepted')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'duplicate')).toHaveLength(19);
    const rows = await harness.db.query<{ id: string }>(`SELECT id::text AS id FROM ${harness.table}`);
    expect(rows).toEqual([{ id: results.find((result) => result.outcome === 'accepted')!.id }]);
  });

  it('stores unknown actions and ignore matches as ignored rows that no worker runs, onAny included', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver({ ignore: ['app:budget:threshold'] });
    const ran: string[] = [];
    receiver.onAny((event) => void ran.push(`any ${event.action}`));
    receiver.on('app:budget:*', (event) => void ran.push(`budget ${event.action}`));

    const unknown = await harness.deliver(receiver, budgetEvent('app:budget:from-the-future', at('.1')));
    const ignored = await harness.deliver(receiver, budgetEvent('app:budget:threshold', at('.2')));
    const accepted = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.3')));
    expect([unknown.outcome, ignored.outcome, accepted.outcome]).toEqual(['ignored', 'ignored', 'accepted']);
    expect(unknown.id).toMatch(/^\d+$/);
    expect(ignored.id).toMatch(/^\d+$/);

    const worker = harness.work(receiver);
    await harness.settle();
    await worker.drain();
    await worker.stop();
    expect(ran.sort()).toEqual(['any app:budget:cap', 'budget app:budget:cap']);
    const rows = await harness.db.query(`SELECT id::text AS id, state, attempts, run_at FROM ${harness.table} ORDER BY id`);
    expect(rows).toEqual([
      { id: unknown.id, state: 'ignored', attempts: 0, run_at: null },
      { id: ignored.id, state: 'ignored', attempts: 0, run_at: null },
      { id: accepted.id, state: 'done', attempts: 1, run_at: expect.anything() },
    ]);
    expect(await harness.db.query(`SELECT delivery_id::text AS id FROM ${harness.attemptsTable}`)).toEqual([{ id: accepted.id }]);
  });

  it('stores nothing for a forged signature, a stale t, invalid JSON or a parsed body', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const event = budgetEvent('app:budget:cap', at('.4'));

    const forged = sign(event, { secrets: 'not-a-configured-secret' });
    await expect(receiver.receive({ body: forged.bytes, headers: forged.headers })).rejects.toMatchObject({
      name: 'WebhookVerificationError',
      code: 'signature_mismatch',
      status: 401,
    });
    const stale = sign(event, { t: nowSeconds() - 3600 });
    await expect(receiver.receive({ body: stale.bytes, headers: stale.headers })).rejects.toMatchObject({ code: 'timestamp_too_old', status: 401 });
    const broken = sign('{"action":"app:budget:cap","status":"success",');
    const invalid = receiver.receive({ body: broken.bytes, headers: broken.headers });
    await expect(invalid).rejects.toBeInstanceOf(WebhookPayloadError);
    await expect(invalid).rejects.toMatchObject({ code: 'invalid_json', status: 400 });
    const good = sign(event);
    const parsed = receiver.receive({ body: JSON.parse(good.body) as never, headers: good.headers });
    await expect(parsed).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(parsed).rejects.toMatchObject({ code: 'payload_not_raw', status: 500 });

    expect(await harness.count()).toBe(0);
    expect(await harness.db.query(`SELECT * FROM ${harness.attemptsTable}`)).toEqual([]);
  });

  it('on a table never migrated, rejects with inbox_not_migrated (500) saying to migrate, and creates nothing', async () => {
    const harness = await openInbox(kind, { migrate: false });
    const receiver = harness.receiver();
    const receiving = harness.deliver(receiver, budgetEvent('app:budget:cap', at('.6')));
    await expect(receiving).rejects.toBeInstanceOf(WebhookInboxError);
    await expect(receiving).rejects.toMatchObject({ code: 'inbox_not_migrated', status: 500, message: expect.stringMatching(/migrate\(\)/) });
    expect(await harness.db.query(`SELECT to_regclass($1) IS NULL AS missing`, [harness.table])).toEqual([{ missing: true }]);
  });
});
