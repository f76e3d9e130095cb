import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { setUp } from '../kit/setup.js';
import { WebhookPayloadError, WebhookVerificationError, type Receiver, type ReceiverLogRecord } from '../../src/index.js';
import { createInbox, schemaSql, WebhookInboxError, type WorkOptions } from '../../src/inbox.js';
import {
  CLIENT_KINDS,
  openDatabase,
  SCENARIO_KINDS,
  pgPoolTo,
  postgresTo,
  scenarioIt,
  type ClientKind,
  type TestDatabase,
} from './databases.js';
import {
  at,
  budgetEvent,
  bytesOf,
  createEffectsTable,
  isNativeTransaction,
  nowSeconds,
  openInbox,
  sign,
  writeEffect,
  type InboxHarness,
} from './helpers.js';
import { deferred } from '../kit/time.js';

/**
 * The inbox's shared behavioural suite: what depends on the client against every client (pg Pool,
 * postgres.js, PGlite), the scenarios on pg (test/inbox/databases.ts).
 * One file on purpose: each test file is its own process that boots PGlite again (3 to 5 s of
 * CPU here), and the suite must stay fast on two cores.
 *
 * Sections: schema; receive (one committed row); worker; list/get; retry/replay/stats/prune.
 */

setUp();

// ── Schema and the write path (receive → one committed row) ─────────────────────────────────────

const TICK = 'tick-2026-04-27T10:30:00Z-9fe533fc297241caa6ca5760dc9b9836';
// The log's indexes: none reads state, the lease or the due time, so the worker's updates of a row are HOT (migration 10).
const INDEXES = ['event_order', 'by_action', 'by_app', 'received', 'duplicates', 'natural_key', 'reconciled_key'];
// The queue's: every way work and rows by state are found.
const QUEUE_INDEXES = ['queue_pkey', 'queue_due', 'queue_noapp', 'queue_app', 'queue_lease', 'queue_state'];
const MIGRATED = [
  { version: 1, name: 'deliveries and attempts' },
  { version: 2, name: 'same-event duplicates kept as rows' },
  { version: 3, name: 'unfinished deliveries by app' },
  { version: 4, name: 'worker heartbeats and refusal counts' },
  { version: 5, name: 'trace context of the receiving span' },
  { version: 6, name: 'alert incidents and leases' },
  { version: 7, name: 'failure class and stack, attempts by start time' },
  { version: 8, name: 'due deliveries without an app' },
  { version: 9, name: 'fewer index entries per state change' },
  { version: 10, name: 'a narrow queue beside the log' },
  { version: 11, name: 'queue triggers planned once' },
  { version: 12, name: 'a renumbered delivery leaves the queue' },
  { version: 13, name: 'attempts deleted with their delivery by trigger' },
  { version: 14, name: 'reconciled deliveries' },
];

/** Columns, indexes and constraints of the schema a test owns, with the schema's name taken out. */
async function catalogue(db: TestDatabase) {
  const strip = (text: string) => text.split(`${db.schema}.`).join('').split(`"${db.schema}".`).join('');
  const columns = await db.query(
    `SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity FROM information_schema.columns
      WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
    [db.schema],
  );
  const indexes = await db.query<{ indexname: string; indexdef: string }>(
    'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
    [db.schema],
  );
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
  } else await (database as { exec(text: string): Promise<unknown> }).exec(script);
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
  it('migrate() applies every version on a fresh table, then nothing, and creates the tables and indexes', async () => {
    const { inbox, db } = await openInbox(kind, { migrate: false });
    expect(await inbox.migrate()).toEqual({ applied: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14], version: 14 });
    expect(await inbox.migrate()).toEqual({ applied: [], version: 14 });

    const tables = await db.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      [db.schema],
    );
    expect(tables.map((t) => t.name)).toEqual([
      'deliveries',
      'deliveries_attempts',
      'deliveries_incidents',
      'deliveries_migrations',
      'deliveries_queue',
      'deliveries_refusals',
      'deliveries_watch_lease',
      'deliveries_workers',
    ]);
    const indexes = await db.query<{ name: string }>(
      `SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 AND tablename = 'deliveries'`,
      [db.schema],
    );
    expect(indexes.map((i) => i.name).sort()).toEqual(
      ['deliveries_pkey', 'deliveries_body_key', 'deliveries_event_key', ...INDEXES.map((suffix) => `deliveries_${suffix}`)].sort(),
    );
    const queueIndexes = await db.query<{ name: string }>(
      `SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 AND tablename = 'deliveries_queue'`,
      [db.schema],
    );
    expect(queueIndexes.map((i) => i.name).sort()).toEqual(QUEUE_INDEXES.map((suffix) => `deliveries_${suffix}`).sort());
    expect(await db.query(`SELECT version, name FROM ${db.table}_migrations ORDER BY version`)).toEqual(MIGRATED);
    // The worker's updates of a log row touch no index (they are HOT: half of each page is kept
    // free for them), and an attempt's outcome can be written on its own page too.
    const options = async (table: string) =>
      (await db.query<{ options: string[] }>(`SELECT reloptions AS options FROM pg_class WHERE oid = $1::regclass`, [table]))[0]!.options;
    expect(await options(db.table)).toEqual(['fillfactor=50']);
    expect(await options(`${db.table}_attempts`)).toEqual(['fillfactor=40']);
  });

  it('schemaSql() creates the same schema as migrate(), recorded as every version', async () => {
    const { db: migrated } = await openInbox(kind);
    const scripted = await openDatabase(kind);
    try {
      await runScript(scripted, schemaSql(scripted.table));
      expect(await scripted.query(`SELECT version, name FROM ${scripted.table}_migrations ORDER BY version`)).toEqual(MIGRATED);
      expect(await catalogue(scripted)).toEqual(await catalogue(migrated));
      // migrate() recognises it, and the inbox works on it.
      const inbox = createInbox({ database: scripted.database as unknown, table: scripted.table });
      expect(await inbox.migrate()).toEqual({ applied: [], version: 14 });
    } finally {
      await scripted.close();
    }
  }, 90_000);

  it('migrate() from two clients at once: both succeed, one applies', async () => {
    const { db } = await openInbox(kind, { migrate: false });
    const { clients, close } = twoClients(kind, db);
    try {
      const results = await Promise.all(clients.map((database) => createInbox({ database, table: db.table }).migrate()));
      expect(results.map((result) => result.version)).toEqual([14, 14]);
      expect(results.map((result) => result.applied).sort((a, b) => a.length - b.length)).toEqual([
        [],
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
      ]);
      expect(await db.query(`SELECT version FROM ${db.table}_migrations ORDER BY version`)).toEqual([
        { version: 1 },
        { version: 2 },
        { version: 3 },
        { version: 4 },
        { version: 5 },
        { version: 6 },
        { version: 7 },
        { version: 8 },
        { version: 9 },
        { version: 10 },
        { version: 11 },
        { version: 12 },
        { version: 13 },
        { version: 14 },
      ]);
    } finally {
      await close();
    }
  });
});

// receive() and the worker on every client where the client matters (its column types, errors,
// transactions and rollbacks; PGlite's one connection under concurrent copies); the rest, the same
// SQL whatever the client, as scenarios (scenarioIt: on pg).
describe.each(CLIENT_KINDS)('receive() with an inbox (%s)', (kind) => {
  const scenario = scenarioIt(kind);
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
              app, tick_id, state, attempts, run_at IS NOT NULL AS due, body_key, event_key, duplicate_of, last_error
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
      body_key: `body:${createHash('sha256').update(body, 'utf8').digest('base64url')}`,
      event_key: expect.stringMatching(new RegExp(`^event:app:budget:auto-shutdown:armed:${TICK}:[A-Za-z0-9_-]{43}$`)),
      duplicate_of: null,
      last_error: null,
    });
    expect(await harness.db.query(`SELECT * FROM ${harness.attemptsTable}`)).toEqual([]);

    const stored = await harness.inbox.get(result.id!);
    expect(stored?.eventNanos).toBe(1777285800123456789n);
    expect(Buffer.from(stored!.body).equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect((stored?.event?.data as Record<string, string>)['actor']).toBe('Zoë ☃ 🚀 ops');
    expect(calls).toEqual([]);
  });

  scenario(
    'stores the same bytes once whatever their t; the same event with new times as a duplicate row; another fact as its own',
    async () => {
      const harness = await openInbox(kind);
      const receiver = harness.receiver();
      const event = budgetEvent('app:budget:auto-shutdown:fired', at('.5'), { tick_id: TICK, shutdown_at: at('.5') });
      const t = nowSeconds();
      const request = sign(event, { t });

      const first = await receiver.receive({ body: request.bytes, headers: request.headers });
      expect(first.outcome).toBe('accepted');
      const again = await receiver.receive({ body: request.bytes, headers: request.headers });
      expect(again).toEqual({ outcome: 'duplicate', event: again.event });
      // The same bytes signed with another t (the rack dispatching one body twice): no row either.
      const resigned = await harness.deliver(receiver, event, { t: t - 30 });
      expect([resigned.outcome, resigned.id]).toEqual(['duplicate', undefined]);
      // The same event with new time fields: other bytes, so a row of its own that runs no handler.
      const later = { ...event, timestamp: at('.75'), data: { ...event.data, shutdown_at: at('.75') } };
      const repeated = await harness.deliver(receiver, later, { t: t - 31 });
      expect(repeated).toMatchObject({ outcome: 'duplicate', id: expect.stringMatching(/^\d+$/), duplicateOf: first.id });
      // Its byte copy is answered without a row.
      const copy = await harness.deliver(receiver, later, { t: t - 32 });
      expect([copy.outcome, copy.id]).toEqual(['duplicate', undefined]);
      // Same tick and action, but it says something else: another fact, accepted.
      const other = await harness.deliver(receiver, { ...event, data: { ...event.data, spend_usd: '1' } }, { t: t - 33 });
      expect(other.outcome).toBe('accepted');

      const rows = await harness.db.query(
        `SELECT id::text AS id, state, duplicate_of::text AS duplicate_of, event_key IS NULL AS no_event_key, signed_at::text AS signed_at
         FROM ${harness.table} ORDER BY id::bigint`,
      );
      expect(rows).toEqual([
        { id: first.id, state: 'pending', duplicate_of: null, no_event_key: false, signed_at: String(t) },
        { id: repeated.id, state: 'duplicate', duplicate_of: first.id, no_event_key: true, signed_at: String(t - 31) },
        { id: other.id, state: 'pending', duplicate_of: null, no_event_key: false, signed_at: String(t - 33) },
      ]);
    },
  );

  it('20 concurrent copies of one delivery: exactly one accepted, one row', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const request = sign(budgetEvent('app:budget:cap', at('.25')));
    const results = await Promise.all(
      Array.from({ length: 20 }, () => receiver.receive({ body: request.bytes, headers: request.headers })),
    );
    const outcomes = results.map((result) => result.outcome);
    expect(outcomes.filter((outcome) => outcome === 'accepted')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'duplicate')).toHaveLength(19);
    const rows = await harness.db.query<{ id: string }>(`SELECT id::text AS id FROM ${harness.table}`);
    expect(rows).toEqual([{ id: results.find((result) => result.outcome === 'accepted')!.id }]);
  });

  scenario('stores unknown actions and ignore matches as ignored rows that no worker runs, onAny included', async () => {
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

  scenario('stores nothing for a forged signature, a stale t, invalid JSON or a parsed body', async () => {
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
    await expect(receiver.receive({ body: stale.bytes, headers: stale.headers })).rejects.toMatchObject({
      code: 'timestamp_too_old',
      status: 401,
    });
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
    await expect(receiving).rejects.toMatchObject({
      code: 'inbox_not_migrated',
      status: 500,
      message: expect.stringMatching(/migrate\(\)/),
    });
    expect(await harness.db.query(`SELECT to_regclass($1) IS NULL AS missing`, [harness.table])).toEqual([{ missing: true }]);
  });
});

// ── The worker: handlers run from stored rows, inside the transaction that marks them done, with
//    retries, backoff, dead letters, event-time order and a graceful stop ──────────────────────

const attemptsOf = (harness: InboxHarness, id: string) =>
  harness.db.query(
    `SELECT attempt, outcome, error, worker, finished_at IS NOT NULL AS finished FROM ${harness.attemptsTable} WHERE delivery_id = $1 ORDER BY attempt`,
    [id],
  );

describe.each(CLIENT_KINDS)('inbox worker (%s)', (kind) => {
  const scenario = scenarioIt(kind);
  it('runs pending deliveries with the row id, attempt 1 and a native transaction whose writes commit', async () => {
    const harness = await openInbox(kind);
    const effects = await createEffectsTable(harness);
    const receiver = harness.receiver();
    const seen: { id: string; attempt: number; native: boolean; action: string }[] = [];
    receiver.on('app:budget:*', async (event, { delivery, transaction }) => {
      seen.push({
        id: delivery.id,
        attempt: delivery.attempt,
        native: isNativeTransaction(kind, transaction, harness.db.database),
        action: event.action,
      });
      await writeEffect(kind, transaction, effects, delivery.id, delivery.attempt);
    });
    const first = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
    const second = await harness.deliver(receiver, budgetEvent('app:budget:threshold', at('.2')));

    const worker = harness.work(receiver, { workerId: 'suite-worker' });
    await harness.settle();
    // Stored while the worker runs: it is woken (or polls) and runs it too.
    const third = await harness.deliver(receiver, budgetEvent('app:budget:set', at('.3')));
    await harness.settle();
    await worker.stop();

    const ids = [first.id!, second.id!, third.id!];
    expect([...seen].sort((a, b) => Number(a.id) - Number(b.id))).toEqual([
      { id: ids[0], attempt: 1, native: true, action: 'app:budget:cap' },
      { id: ids[1], attempt: 1, native: true, action: 'app:budget:threshold' },
      { id: ids[2], attempt: 1, native: true, action: 'app:budget:set' },
    ]);
    expect(await harness.db.query(`SELECT delivery_id::text AS id, attempt FROM ${effects} ORDER BY delivery_id`)).toEqual(
      ids.map((id) => ({ id, attempt: 1 })),
    );
    expect(
      await harness.db.query(
        `SELECT id::text AS id, state, attempts, locked_by, locked_until, last_error, done_at IS NOT NULL AS finished FROM ${harness.table} ORDER BY id`,
      ),
    ).toEqual(ids.map((id) => ({ id, state: 'done', attempts: 1, locked_by: null, locked_until: null, last_error: null, finished: true })));
    for (const id of ids) {
      expect(await attemptsOf(harness, id)).toEqual([
        { attempt: 1, outcome: 'succeeded', error: null, worker: 'suite-worker', finished: true },
      ]);
    }
  });

  it('rolls back what a failed attempt wrote and retries: failed, failed, succeeded, one effect', async () => {
    const harness = await openInbox(kind);
    const effects = await createEffectsTable(harness);
    const receiver = harness.receiver();
    receiver.on('app:budget:cap', async (_event, { delivery, transaction }) => {
      await writeEffect(kind, transaction, effects, delivery.id, delivery.attempt);
      if (delivery.attempt < 3) throw new Error(`boom on attempt ${delivery.attempt}`);
    });
    const { id } = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
    harness.work(receiver);
    await harness.settle();

    expect(await harness.db.query(`SELECT delivery_id::text AS id, attempt FROM ${effects}`)).toEqual([{ id, attempt: 3 }]);
    const stored = await harness.inbox.get(id!);
    expect(stored).toMatchObject({ state: 'done', attempts: 3, lastError: null });
    expect(stored?.attemptLog.map(({ attempt, outcome, error }) => ({ attempt, outcome, error }))).toEqual([
      { attempt: 1, outcome: 'failed', error: 'boom on attempt 1' },
      { attempt: 2, outcome: 'failed', error: 'boom on attempt 2' },
      { attempt: 3, outcome: 'succeeded', error: null },
    ]);
    for (const attempt of stored!.attemptLog) expect(attempt.finishedAt).toBeInstanceOf(Date);
  });

  scenario('ends dead after maxAttempts with a bounded last_error, and is not run again', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    let runs = 0;
    let later = 0;
    receiver.on('app:budget:cap', () => {
      runs += 1;
      throw new Error('x'.repeat(10_000));
    });
    receiver.on('app:budget:threshold', () => void (later += 1));
    const { id } = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
    harness.work(receiver, { maxAttempts: 2 });
    await harness.settle();
    // A dead delivery stays dead: later claims (two deliveries stored after it, each run) pass it by.
    for (const fraction of ['.2', '.3']) await harness.deliver(receiver, budgetEvent('app:budget:threshold', at(fraction)));
    await harness.settle();
    expect(later).toBe(2);

    expect(runs).toBe(2);
    const [row] = await harness.db.query<{ state: string; attempts: number; length: number; head: string }>(
      `SELECT state, attempts, char_length(last_error) AS length, left(last_error, 10) AS head FROM ${harness.table} WHERE id = $1`,
      [id],
    );
    expect(row).toMatchObject({ state: 'dead', attempts: 2, head: 'xxxxxxxxxx' });
    expect(row!.length).toBeLessThanOrEqual(2000);
    expect(row!.length).toBeGreaterThan(1000);
    const lengths = await harness.db.query<{ outcome: string; length: number }>(
      `SELECT outcome, char_length(error) AS length FROM ${harness.attemptsTable} WHERE delivery_id = $1 ORDER BY attempt`,
      [id],
    );
    expect(lengths.map((attempt) => attempt.outcome)).toEqual(['failed', 'failed']);
    for (const attempt of lengths) expect(attempt.length).toBeLessThanOrEqual(2000);
  });

  scenario('waits the backoff between attempts: at least 200 ms, then 400 ms', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    receiver.on('app:budget:cap', (_event, { delivery }) => {
      if (delivery.attempt < 3) throw new Error('not yet');
    });
    const { id } = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
    harness.work(receiver, { backoff: { baseMs: 200, jitter: 'none' } });
    await harness.settle();

    const log = (await harness.inbox.get(id!))!.attemptLog;
    expect(log.map((attempt) => attempt.outcome)).toEqual(['failed', 'failed', 'succeeded']);
    // Database clock on both sides: a retry is due `delay` after the failure was recorded.
    const gap = (after: number) => log[after]!.startedAt.getTime() - log[after - 1]!.finishedAt!.getTime();
    expect(gap(1)).toBeGreaterThanOrEqual(199);
    expect(gap(2)).toBeGreaterThanOrEqual(399);
    expect(gap(1)).toBeLessThan(5000);
    expect(gap(2)).toBeLessThan(5000);
  });

  scenario('tells the logger accepted, processed, retried and dead with the delivery id, never the body or signature', async () => {
    const harness = await openInbox(kind);
    const records: ReceiverLogRecord[] = [];
    const receiver = harness.receiver({ logger: (record) => void records.push(record) });
    receiver.on('app:budget:*', (event) => {
      if (event.action === 'app:budget:threshold') throw new Error('handler says no');
    });
    const marker = 'body-marker-6b1f0e';
    const good = sign(budgetEvent('app:budget:cap', at('.1'), { actor: marker }));
    const bad = sign(budgetEvent('app:budget:threshold', at('.2'), { actor: marker }));
    const ok = await receiver.receive({ body: good.bytes, headers: good.headers });
    const failing = await receiver.receive({ body: bad.bytes, headers: bad.headers });
    const worker = harness.work(receiver, { maxAttempts: 2 });
    await harness.settle();
    await worker.stop(); // the worker logs after it records: stop() waits for that

    const about = (id: string | undefined) =>
      records.filter((record) => record.deliveryId === id).map(({ event, attempt }) => ({ event, attempt }));
    expect(about(ok.id)).toEqual([
      { event: 'accepted', attempt: undefined },
      { event: 'processed', attempt: 1 },
    ]);
    expect(about(failing.id)).toEqual([
      { event: 'accepted', attempt: undefined },
      { event: 'retried', attempt: 1 },
      { event: 'dead', attempt: 2 },
    ]);
    const text = JSON.stringify(records);
    for (const secret of [
      marker,
      good.headers['service-signature']!,
      bad.headers['service-signature']!,
      'v1=',
      good.body,
      'handler says no',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  scenario('with concurrency 1 runs pending deliveries in event-time order to the nanosecond, not arrival order', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const order: string[] = [];
    receiver.on('app:budget:cap', (event) => void order.push(event.timestamp));
    const arrivals = [at('.000000003'), at('.000000001'), '2026-04-27T10:29:59.999999999Z', at('.000000002')];
    for (const timestamp of arrivals) await harness.deliver(receiver, budgetEvent('app:budget:cap', timestamp));
    harness.work(receiver, { concurrency: 1 });
    await harness.settle();
    expect(order).toEqual(['2026-04-27T10:29:59.999999999Z', at('.000000001'), at('.000000002'), at('.000000003')]);
  });

  scenario('stop() waits for the in-flight handler and leaves nothing running or half-recorded', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const events: string[] = [];
    const handlerStarted = deferred<void>();
    const handlerReleased = deferred<void>();
    receiver.on('app:budget:cap', async () => {
      handlerStarted.resolve();
      await handlerReleased.promise;
      events.push('handler finished');
    });
    const slow = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
    const waiting = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.2')));
    const worker = harness.work(receiver, { concurrency: 1 });
    await handlerStarted.promise;
    const stopped = worker.stop().then(() => events.push('stop resolved'));
    // stop() has had its turn to return early (a round trip to the database), and has not.
    await harness.db.query('SELECT 1');
    expect(events).toEqual([]);
    handlerReleased.resolve();
    await stopped;

    expect(events).toEqual(['handler finished', 'stop resolved']);
    expect(await harness.count(`state = 'running'`)).toBe(0);
    expect(await harness.db.query(`SELECT * FROM ${harness.attemptsTable} WHERE outcome IS NULL`)).toEqual([]);
    expect(await harness.db.query(`SELECT id::text AS id, state, attempts, locked_by FROM ${harness.table} ORDER BY id`)).toEqual([
      { id: slow.id, state: 'done', attempts: 1, locked_by: null },
      { id: waiting.id, state: 'pending', attempts: 0, locked_by: null },
    ]);
  });
});

// ── Reading and operating a stored inbox: list, get, retry, replay, stats, prune ────────────────

/** Runs a worker until nothing is pending or running, then stops it. */
async function runUntilSettled(harness: InboxHarness, receiver: Receiver<unknown>, options: WorkOptions = {}): Promise<void> {
  const worker = harness.work(receiver, options);
  await harness.settle();
  await worker.stop();
}

/**
 * Six deliveries in every state, arriving out of event-time order. Event order (asc):
 * release, threshold, cap, set (same nanosecond as cap, arrived later), armed, truncated.
 */
async function seed(harness: InboxHarness) {
  const receiver = harness.receiver({ ignore: ['app:budget:per-service-truncated'] });
  receiver.onAny((event) => {
    if ((event.data as Record<string, unknown>)['app'] === 'checkout-web') throw new Error('no');
  });
  const t = nowSeconds() - 5;
  const deliver = async (action: string, timestamp: string, app: string) =>
    (await harness.deliver(receiver, budgetEvent(action, timestamp, { app }), { t })).id!;
  const cap = await deliver('app:budget:cap', at('.000000002'), 'billing-api');
  const threshold = await deliver('app:budget:threshold', at('.000000001'), 'billing-api');
  const armed = await deliver('app:budget:auto-shutdown:armed', at('.5'), 'checkout-web');
  const release = await deliver('release:create', '2026-04-27T10:29:59.999999999Z', 'reports-worker');
  const truncated = await deliver('app:budget:per-service-truncated', '2026-04-27T10:30:01Z', 'data-pipeline');
  await runUntilSettled(harness, receiver, { maxAttempts: 1 });
  const set = await deliver('app:budget:set', at('.000000002'), 'billing-api'); // stays pending: no worker now
  return { t, ids: { release, threshold, cap, set, armed, truncated } };
}

const idsOf = (page: { deliveries: readonly { id: string }[] }) => page.deliveries.map((delivery) => delivery.id);

describe.each(SCENARIO_KINDS)('inbox list/get (%s)', (kind) => {
  it('lists by event time to the nanosecond then arrival, newest first with desc, and pages with the cursor', async () => {
    const harness = await openInbox(kind);
    const { t, ids } = await seed(harness);
    const ascending = [ids.release, ids.threshold, ids.cap, ids.set, ids.armed, ids.truncated];

    const all = await harness.inbox.list();
    expect(idsOf(all)).toEqual(ascending);
    expect(all.next).toBeUndefined();
    expect(idsOf(await harness.inbox.list({ order: 'desc' }))).toEqual([...ascending].reverse());
    expect(all.deliveries.map((delivery) => delivery.state)).toEqual(['done', 'done', 'done', 'pending', 'dead', 'ignored']);
    expect(all.deliveries[4]).toEqual({
      id: ids.armed,
      state: 'dead',
      action: 'app:budget:auto-shutdown:armed',
      app: 'checkout-web',
      tickId: null,
      eventTime: at('.5'),
      eventNanos: 1_777_285_800_500_000_000n,
      receivedAt: expect.any(Date),
      signedAt: t,
      secretIndex: 1,
      attempts: 1,
      runAt: expect.any(Date),
      lastError: 'no',
      doneAt: null,
      replayedAt: null,
      duplicateOf: null,
      origin: 'received',
      evidence: null,
    });

    // Five budget rows, two a page, both ways: every row once, in order, the tie (cap, set) split across pages.
    for (const order of ['asc', 'desc'] as const) {
      const pages: string[][] = [];
      let after: string | undefined;
      do {
        const page = await harness.inbox.list({ action: 'app:budget:*', limit: 2, order, ...(after === undefined ? {} : { after }) });
        pages.push(idsOf(page));
        after = page.next;
      } while (after !== undefined && pages.length < 10);
      const budget = ascending.slice(1);
      const expected = order === 'asc' ? budget : [...budget].reverse();
      expect(pages).toEqual([expected.slice(0, 2), expected.slice(2, 4), expected.slice(4)]);
    }
  });

  it('filters by event time (Date and RFC 3339 with nanoseconds), action, pattern, app and state, and refuses bad arguments', async () => {
    const harness = await openInbox(kind);
    const { ids } = await seed(harness);
    const list = async (options: Parameters<typeof harness.inbox.list>[0]) => idsOf(await harness.inbox.list(options));

    expect(await list({ from: at('.000000002') })).toEqual([ids.cap, ids.set, ids.armed, ids.truncated]);
    expect(await list({ to: at('.000000002') })).toEqual([ids.release, ids.threshold]);
    expect(await list({ from: at('.000000001'), to: at('.000000002') })).toEqual([ids.threshold]);
    // A Date has milliseconds: from 10:30:00.000 includes .000000001; to 10:30:00.500 excludes .5 exactly.
    expect(await list({ from: new Date('2026-04-27T10:30:00.000Z'), to: new Date('2026-04-27T10:30:00.500Z') })).toEqual([
      ids.threshold,
      ids.cap,
      ids.set,
    ]);
    expect(await list({ from: 1_777_285_800_500_000_000n })).toEqual([ids.armed, ids.truncated]);

    expect(await list({ action: 'app:budget:cap' })).toEqual([ids.cap]);
    expect(await list({ action: 'app:budget:*' })).toEqual([ids.threshold, ids.cap, ids.set, ids.armed, ids.truncated]);
    expect(await list({ action: ['app:budget:set', 'app:budget:cap'] })).toEqual([ids.cap, ids.set]);
    expect(await list({ action: ['release:*', 'app:budget:auto-shutdown:*'] })).toEqual([ids.release, ids.armed]);
    expect(await list({ action: 'app:budget' })).toEqual([]);
    expect(await list({ app: 'billing-api' })).toEqual([ids.threshold, ids.cap, ids.set]);
    expect(await list({ state: 'done' })).toEqual([ids.release, ids.threshold, ids.cap]);
    expect(await list({ state: ['dead', 'ignored'] })).toEqual([ids.armed, ids.truncated]);
    expect(await list({ state: 'pending', app: 'billing-api', action: 'app:budget:*' })).toEqual([ids.set]);
    expect(await list({ ids: [ids.truncated, ids.release] })).toEqual([ids.release, ids.truncated]);

    await expect(harness.inbox.list({ after: 'not-a-cursor' })).rejects.toThrow(TypeError);
    await expect(harness.inbox.list({ limit: 0 })).rejects.toThrow(RangeError);
    await expect(harness.inbox.list({ limit: 1001 })).rejects.toThrow(RangeError);
    await expect(harness.inbox.list({ state: 'finished' as never })).rejects.toThrow(RangeError);
    await expect(harness.inbox.list({ action: 'app*' })).rejects.toThrow(TypeError);
    await expect(harness.inbox.list({ from: 'yesterday' })).rejects.toThrow(RangeError);
  });

  it('get() gives the raw body, signature, parsed event and attempt log; undefined for an unknown id; TypeError for a malformed one', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    receiver.on('app:budget:cap', (_event, { delivery }) => {
      if (delivery.attempt === 1) throw new Error('first try fails');
    });
    const event = budgetEvent('app:budget:cap', at('.123456789'), { actor: 'Zoë' });
    const request = sign(event);
    const { id } = await receiver.receive({ body: request.bytes, headers: request.headers });
    await runUntilSettled(harness, receiver, { workerId: 'ops-worker' });

    const stored = await harness.inbox.get(id!);
    expect(Buffer.from(stored!.body).equals(Buffer.from(request.bytes))).toBe(true);
    expect(stored).toMatchObject({
      id,
      state: 'done',
      attempts: 2,
      eventNanos: 1_777_285_800_123_456_789n,
      signature: request.headers['service-signature'],
    });
    expect(stored!.event).toEqual(event);
    expect(stored!.doneAt).toBeInstanceOf(Date);
    expect(stored!.attemptLog).toEqual([
      {
        attempt: 1,
        worker: 'ops-worker',
        startedAt: expect.any(Date),
        finishedAt: expect.any(Date),
        outcome: 'failed',
        error: 'first try fails',
        errorClass: 'Error',
        errorStack: expect.stringMatching(/^Error: first try fails\n\s+at /),
      },
      {
        attempt: 2,
        worker: 'ops-worker',
        startedAt: expect.any(Date),
        finishedAt: expect.any(Date),
        outcome: 'succeeded',
        error: null,
        errorClass: null,
        errorStack: null,
      },
    ]);

    expect(await harness.inbox.get(String(Number(id) + 1000))).toBeUndefined();
    await expect(harness.inbox.get('abc')).rejects.toThrow(TypeError);
    await expect(harness.inbox.get('0')).rejects.toThrow(TypeError);
  });
});

describe.each(SCENARIO_KINDS)('inbox retry/replay/stats/prune (%s)', (kind) => {
  it('retry(id) and retry({ action }) move only dead deliveries to pending with a fresh budget of attempts', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver({ ignore: ['app:budget:reset'] });
    const failuresLeft = new Map<string, number>();
    receiver.on('app:budget:*', (_event, { delivery }) => {
      const left = failuresLeft.get(delivery.id) ?? 0;
      failuresLeft.set(delivery.id, left - 1);
      if (left > 0) throw new Error(`failing, ${left} left`);
    });
    const deliver = async (action: string, fraction: string) => (await harness.deliver(receiver, budgetEvent(action, at(fraction)))).id!;
    const cap = await deliver('app:budget:cap', '.1');
    const threshold = await deliver('app:budget:threshold', '.2');
    const done = await deliver('app:budget:set', '.3');
    const ignored = await deliver('app:budget:reset', '.4');
    failuresLeft.set(cap, 2).set(threshold, 2);
    await runUntilSettled(harness, receiver, { maxAttempts: 2 });
    expect(await harness.db.query(`SELECT state, attempts FROM ${harness.table} ORDER BY id`)).toEqual([
      { state: 'dead', attempts: 2 },
      { state: 'dead', attempts: 2 },
      { state: 'done', attempts: 1 },
      { state: 'ignored', attempts: 0 },
    ]);

    expect(await harness.inbox.retry(done)).toBe(0);
    expect(await harness.inbox.retry(ignored)).toBe(0);
    expect(await harness.inbox.retry(cap)).toBe(1);
    expect(await harness.inbox.retry(cap)).toBe(0); // pending now, not dead
    expect(
      await harness.db.query(
        `SELECT state, attempts, attempt_base, last_error, run_at <= now() AS due FROM ${harness.table} WHERE id = $1`,
        [cap],
      ),
    ).toEqual([{ state: 'pending', attempts: 2, attempt_base: 2, last_error: null, due: true }]);
    expect(await harness.db.query(`SELECT state FROM ${harness.table} WHERE id = $1`, [threshold])).toEqual([{ state: 'dead' }]);
    expect(await harness.inbox.retry({ action: 'app:budget:threshold' })).toBe(1);
    expect(await harness.inbox.retry({ action: 'app:budget:*' })).toBe(0);

    // cap fails once more, then succeeds: only a fresh budget of 2 lets attempt 4 run.
    failuresLeft.set(cap, 1).set(threshold, 0);
    await runUntilSettled(harness, receiver, { maxAttempts: 2 });
    expect((await harness.inbox.get(cap))!.attemptLog.map((attempt) => attempt.outcome)).toEqual([
      'failed',
      'failed',
      'failed',
      'succeeded',
    ]);
    expect(await harness.db.query(`SELECT id::text AS id, state, attempts FROM ${harness.table} ORDER BY id`)).toEqual([
      { id: cap, state: 'done', attempts: 4 },
      { id: threshold, state: 'done', attempts: 3 },
      { id: done, state: 'done', attempts: 1 },
      { id: ignored, state: 'ignored', attempts: 0 },
    ]);
  });

  it('replay(filter) moves only done deliveries back, runs them again in event-time order and logs them as replayed', async () => {
    const harness = await openInbox(kind);
    const records: ReceiverLogRecord[] = [];
    const receiver = harness.receiver({ ignore: ['app:budget:reset'], logger: (record) => void records.push(record) });
    const runs: string[] = [];
    receiver.on('app:budget:*', (event, { delivery }) => {
      runs.push(delivery.id);
      if (event.action === 'app:budget:clear') throw new Error('always fails');
    });
    const deliver = async (action: string, fraction: string) => (await harness.deliver(receiver, budgetEvent(action, at(fraction)))).id!;
    const late = await deliver('app:budget:cap', '.000000003');
    const early = await deliver('app:budget:cap', '.000000001');
    const middle = await deliver('app:budget:threshold', '.000000002');
    const dead = await deliver('app:budget:clear', '.4');
    const ignored = await deliver('app:budget:reset', '.5');
    await runUntilSettled(harness, receiver, { maxAttempts: 1, concurrency: 1 });
    const pending = await deliver('app:budget:set', '.6');

    expect(await harness.inbox.replay({ action: 'release:*' })).toBe(0);
    runs.length = 0;
    records.length = 0;
    expect(await harness.inbox.replay({})).toBe(3);
    const rows = await harness.db.query<{ id: string; state: string; replayed: boolean; attempt_base: number }>(
      `SELECT id::text AS id, state, replayed_at IS NOT NULL AS replayed, attempt_base FROM ${harness.table} ORDER BY id`,
    );
    expect(rows).toEqual([
      { id: late, state: 'pending', replayed: true, attempt_base: 1 },
      { id: early, state: 'pending', replayed: true, attempt_base: 1 },
      { id: middle, state: 'pending', replayed: true, attempt_base: 1 },
      { id: dead, state: 'dead', replayed: false, attempt_base: 0 },
      { id: ignored, state: 'ignored', replayed: false, attempt_base: 0 },
      { id: pending, state: 'pending', replayed: false, attempt_base: 0 },
    ]);

    await runUntilSettled(harness, receiver, { concurrency: 1 });
    expect(runs).toEqual([early, middle, late, pending]);
    expect(records.filter((record) => record.event === 'replayed').map(({ deliveryId, attempt }) => ({ deliveryId, attempt }))).toEqual([
      { deliveryId: early, attempt: 2 },
      { deliveryId: middle, attempt: 2 },
      { deliveryId: late, attempt: 2 },
    ]);
    expect(records.filter((record) => record.event === 'processed').map((record) => record.deliveryId)).toEqual([pending]);
    const replayed = await harness.inbox.get(early);
    expect(replayed).toMatchObject({ state: 'done', attempts: 2, replayedAt: expect.any(Date) });
    expect(replayed!.attemptLog.map((attempt) => attempt.outcome)).toEqual(['succeeded', 'succeeded']);
    await expect(harness.inbox.replay(null as never)).rejects.toThrow(TypeError);
  });

  it('stats() counts by state and ages the oldest pending delivery (null when none)', async () => {
    const harness = await openInbox(kind);
    expect(await harness.inbox.stats()).toEqual({
      pending: 0,
      running: 0,
      done: 0,
      dead: 0,
      ignored: 0,
      duplicate: 0,
      total: 0,
      oldestPendingAgeMs: null,
    });
    await seed(harness);
    // The seed leaves one pending delivery; one more, received 5 s ago as far as the table knows.
    const receiver = harness.receiver();
    receiver.on('app:budget:*', () => {});
    const older = (await harness.deliver(receiver, budgetEvent('app:budget:clear', at('.7')))).id!;
    await harness.db.query(`UPDATE ${harness.table} SET received_at = now() - interval '5 seconds' WHERE id = $1`, [older]);

    const stats = await harness.inbox.stats();
    expect(stats).toEqual({
      pending: 2,
      running: 0,
      done: 3,
      dead: 1,
      ignored: 1,
      duplicate: 0,
      total: 7,
      oldestPendingAgeMs: expect.any(Number),
    });
    expect(stats.oldestPendingAgeMs).toBeGreaterThanOrEqual(5000);
    expect(stats.oldestPendingAgeMs).toBeLessThan(65_000);

    await runUntilSettled(harness, receiver);
    expect(await harness.inbox.stats()).toEqual({
      pending: 0,
      running: 0,
      done: 5,
      dead: 1,
      ignored: 1,
      duplicate: 0,
      total: 7,
      oldestPendingAgeMs: null,
    });
  });

  it('prune({ before }) deletes done, dead and ignored deliveries received before, never pending ones, with their attempts', async () => {
    const harness = await openInbox(kind);
    const { ids } = await seed(harness);
    const { cap, set } = ids;
    // Everything but `cap` was received two days ago, as far as the table knows.
    await harness.db.query(`UPDATE ${harness.table} SET received_at = now() - interval '2 days' WHERE id <> $1`, [cap]);

    // release (done), threshold (done), armed (dead), truncated (ignored); set is pending.
    expect(await harness.inbox.prune({ before: new Date(Date.now() - 86_400_000) })).toBe(4);
    expect(await harness.db.query(`SELECT id::text AS id, state FROM ${harness.table} ORDER BY id`)).toEqual([
      { id: cap, state: 'done' },
      { id: set, state: 'pending' },
    ]);
    const attempts = await harness.db.query<{ id: string }>(
      `SELECT delivery_id::text AS id FROM ${harness.attemptsTable} ORDER BY delivery_id`,
    );
    expect(attempts).toEqual([{ id: cap }]);

    expect(await harness.inbox.prune({ before: new Date(Date.now() - 86_400_000) })).toBe(0);
    await expect(harness.inbox.prune({ before: '2026-01-01' as never })).rejects.toThrow(TypeError);
  });
});
