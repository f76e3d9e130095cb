import { randomBytes } from 'node:crypto';
import pg from 'pg';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { setUp } from '../kit/setup.js';
import { createReceiver, type Receiver, type ReceiverLogRecord } from '../../src/index.js';
import { createInbox, WebhookInboxError, type Inbox, type WorkOptions } from '../../src/inbox.js';
import { CLIENT_KINDS, connectionRefusedUrl, SCENARIO_KINDS, openDatabase, pgPoolTo, POSTGRES_URL } from './databases.js';
import { within } from '../kit/time.js';
import { at, budgetEvent, bytesOf, FAST, nowSeconds, openInbox, sign, SECRETS, type InboxHarness } from './helpers.js';

/**
 * Regression tests for the defects a review found in the inbox (one `describe` per defect). Each
 * test fails on the code before the fix: it asserts what the fix changed, not only that nothing
 * throws. Every await that hung before a fix is bounded, so a regression fails instead of hanging.
 */

setUp();

/** Rejects when `promise` has not settled within `ms`: a hang becomes a failure with a name. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${String(value)}`);
    },
    (error: unknown) => error,
  );
}

/** A schema name the databases.ts sweep recognises (`rwt_<hex seconds>_<random>`), should a run die before the drop. */
function freshSchemaName(): string {
  return `rwt_${nowSeconds().toString(16)}_${randomBytes(6).toString('hex')}`;
}

/** Registers `handler` for the budget actions these tests send. */
function onBudget(receiver: Receiver<unknown>, handler: Parameters<Receiver<unknown>['on']>[1]): void {
  receiver.on('app:budget:*', handler);
}

// ── 1. retry/replay honour a `state` in the filter ──────────────────────────────────────────────

describe.each(SCENARIO_KINDS)('regression: retry/replay narrow by the filter state too (%s)', (kind) => {
  it('replay({ state: "dead" }) and retry({ state: "pending" }) move nothing; retry({ state: "dead", action }) still works', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const runs: string[] = [];
    onBudget(receiver, (event, { delivery }) => {
      runs.push(delivery.id);
      if (event.action === 'app:budget:threshold') throw new Error('always fails');
    });
    await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1'), { app: 'good-1' }));
    await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.2'), { app: 'good-2' }));
    const dead = (await harness.deliver(receiver, budgetEvent('app:budget:threshold', at('.3'), { app: 'bad' }))).id!;
    const worker = harness.work(receiver, { maxAttempts: 1 });
    await within(worker.drain(), 10_000, 'first drain');
    expect(await harness.count(`state = 'done'`)).toBe(2);
    expect(await harness.count(`state = 'dead'`)).toBe(1);
    runs.length = 0;

    // Before the fix replay() overrode the state with 'done' and replayed both done rows.
    expect(await harness.inbox.replay({ state: 'dead' })).toBe(0);
    // ...and retry() overrode it with 'dead' and retried the dead row.
    expect(await harness.inbox.retry({ state: 'pending' })).toBe(0);
    // A state that is not a state name is the filter's RangeError, as in list() (a TypeError from inside it before).
    await expect(harness.inbox.retry({ state: 42 as never })).rejects.toThrow(
      new RangeError('state must be one of pending, running, done, dead, ignored, duplicate, got 42'),
    );
    await within(worker.drain(), 10_000, 'drain after the no-op replay');
    expect(runs).toEqual([]);
    expect(await harness.count(`state = 'done'`)).toBe(2);
    expect(await harness.count(`state = 'dead'`)).toBe(1);
    // Stopped, so the row a retry moves stays pending for the assertion below.
    await within(worker.stop(), 5000, 'stop()');

    expect(await harness.inbox.retry({ state: 'dead', action: 'app:budget:cap' })).toBe(0);
    expect(await harness.inbox.retry({ state: 'dead', action: 'app:budget:threshold' })).toBe(1);
    const [row] = await harness.db.query<{ state: string; replayed: boolean }>(
      `SELECT state, replayed_at IS NOT NULL AS replayed FROM ${harness.table} WHERE id = $1`,
      [dead],
    );
    expect(row).toEqual({ state: 'pending', replayed: false });
  });
});

// ── 2. drain() takes deliveries whose worker died ───────────────────────────────────────────────

describe.each(SCENARIO_KINDS)('regression: drain() recovers an expired lease (%s)', (kind) => {
  it("a delivery left running by a dead worker is processed by a fresh worker's drain(): done, ghost attempt crashed, attempt 2 succeeded", async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const runs: { id: string; attempt: number; origin: string }[] = [];
    onBudget(receiver, (_event, { delivery }) => void runs.push({ ...delivery }));
    // No LISTEN and a poll far away: only drain() itself can find the crashed delivery. The worker
    // starts (and its first poll finishes) before the crash exists, so the poll cannot be what
    // recovers it.
    const worker = harness.work(receiver, { listen: false, pollIntervalMs: 600_000 });
    await within(worker.drain(), 10_000, 'drain of an empty inbox');
    const { id } = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));

    // A worker claimed it and died: running, lease expired, its attempt open. No child process needed.
    await harness.db.query(
      `UPDATE ${harness.table} SET state = 'running', attempts = 1, locked_by = 'ghost', locked_until = now() - interval '1 second' WHERE id = $1`,
      [id],
    );
    await harness.db.query(`INSERT INTO ${harness.attemptsTable} (delivery_id, attempt, worker, outcome) VALUES ($1, 1, 'ghost', NULL)`, [
      id,
    ]);

    await within(worker.drain(), 10_000, 'drain with a crashed delivery');
    expect(runs).toEqual([{ id, attempt: 2, origin: 'received' }]);
    const [row] = await harness.db.query(`SELECT state, attempts, locked_by FROM ${harness.table} WHERE id = $1`, [id]);
    expect(row).toEqual({ state: 'done', attempts: 2, locked_by: null });
    const attempts = await harness.db.query(
      `SELECT attempt, worker, outcome FROM ${harness.attemptsTable} WHERE delivery_id = $1 ORDER BY attempt`,
      [id],
    );
    expect(attempts).toEqual([
      { attempt: 1, worker: 'ghost', outcome: 'crashed' },
      { attempt: 2, worker: worker.id, outcome: 'succeeded' },
    ]);
  });
});

// ── 3. A handler's re-entrant call on a single connection fails instead of hanging ──────────────

/**
 * A handler that calls `inbox.stats()` while its transaction holds the only connection. Before the
 * fix it waited for that connection for ever: drain(), every later receive() and stop() hung.
 */
async function expectReentrantCallRefused(inbox: Inbox<unknown>): Promise<void> {
  const receiver = createReceiver<unknown>({ secrets: SECRETS, inbox });
  let entered = 0;
  onBudget(receiver, async () => {
    entered++;
    await inbox.stats();
  });
  const first = sign(budgetEvent('app:budget:cap', at('.1')));
  const accepted = await within(receiver.receive({ body: first.bytes, headers: first.headers }), 5000, 'first receive()');
  const worker = inbox.work(receiver, { ...FAST, maxAttempts: 1 });
  let stopped = false;
  try {
    await within(worker.drain(), 5000, 'drain() with a re-entrant handler');
    expect(entered).toBe(1);
    const detail = await within(inbox.get(accepted.id!), 5000, 'get()');
    expect(detail?.state).toBe('dead');
    expect(detail?.attemptLog).toHaveLength(1);
    expect(detail?.attemptLog[0]).toMatchObject({ attempt: 1, outcome: 'failed', error: expect.stringContaining('context.transaction') });

    const second = sign(budgetEvent('app:budget:cap', at('.2')));
    const next = await within(
      receiver.receive({ body: second.bytes, headers: second.headers }),
      5000,
      'receive() after the re-entrant handler',
    );
    expect(next.outcome).toBe('accepted');
    await within(worker.stop(), 5000, 'stop()');
    stopped = true;
  } finally {
    // After a failure above, bounded and quiet: the failure that matters is the one already thrown.
    if (!stopped) await within(worker.stop(), 2000, 'stop() after a failure').catch(() => {});
  }
}

describe('regression: a re-entrant handler on one connection fails its attempt instead of hanging', () => {
  it('pg Client', async () => {
    // The pool only provides the schema (and drops it); the inbox runs on one pg Client.
    const db = await openDatabase('pg');
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    client.on('error', () => {});
    try {
      await client.connect();
      const inbox = createInbox({ database: client as unknown, table: db.table });
      await within(inbox.migrate(), 5000, 'migrate()');
      await expectReentrantCallRefused(inbox);
    } finally {
      await within(client.end(), 5000, 'client.end()').catch(() => {});
      await db.close();
    }
  });

  it('PGlite', async () => {
    const harness = await openInbox('pglite');
    await expectReentrantCallRefused(harness.inbox);
  });
});

// ── 4. Far-away timestamps and NUL characters are stored, not refused ───────────────────────────

const FAR_TIMESTAMPS = ['2300-01-01T00:00:00Z', '1600-01-01T00:00:00Z', '2262-04-11T23:47:16.854775808Z'];

async function storedRow(harness: InboxHarness, id: string) {
  const [row] = await harness.db.query<{
    action: string;
    app: string | null;
    tick_id: string | null;
    event_time: string;
    event_ns: string;
    state: string;
    body: unknown;
  }>(`SELECT action, app, tick_id, event_time, event_ns::text AS event_ns, state, body FROM ${harness.table} WHERE id = $1`, [id]);
  return row!;
}

describe.each(CLIENT_KINDS)('regression: deliveries int8 or text columns cannot hold as sent (%s)', (kind) => {
  it('stores event times outside int8 nanoseconds as sent, ordered at the time received', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    for (const timestamp of FAR_TIMESTAMPS) {
      const before = BigInt(Date.now() - 1000) * 1_000_000n;
      const result = await harness.deliver(receiver, budgetEvent('app:budget:cap', timestamp));
      const after = BigInt(Date.now() + 1000) * 1_000_000n;
      expect(result.outcome, timestamp).toBe('accepted');
      const row = await storedRow(harness, result.id!);
      expect(row.event_time).toBe(timestamp);
      expect(BigInt(row.event_ns) >= before && BigInt(row.event_ns) <= after, `${timestamp}: event_ns ${row.event_ns}`).toBe(true);
      const [listed] = (await harness.inbox.list({ ids: [result.id!] })).deliveries;
      expect(listed?.eventTime).toBe(timestamp);
      expect(listed?.eventNanos).toBe(BigInt(row.event_ns));
    }
  });

  it('stores \\u0000 in data.app, data.tick_id, the timestamp and an unknown action as U+FFFD, with the exact body', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const base = () => budgetEvent('app:budget:cap', at('.1'));
    const cases = [
      {
        label: 'data.app',
        event: { ...base(), data: { ...base().data, app: 'billing\u0000api' } },
        outcome: 'accepted',
        column: { app: 'billing\uFFFDapi' },
      },
      {
        label: 'data.tick_id',
        event: { ...base(), data: { ...base().data, tick_id: 'tick-nul\u0000' } },
        outcome: 'accepted',
        column: { tick_id: 'tick-nul\uFFFD' },
      },
      {
        label: 'timestamp',
        event: { ...base(), timestamp: `${at('.2')}\u0000` },
        outcome: 'accepted',
        column: { event_time: `${at('.2')}\uFFFD` },
      },
      {
        label: 'action',
        event: { ...base(), action: 'app:budget:cap\u0000x' },
        outcome: 'ignored',
        column: { action: 'app:budget:cap\uFFFDx', state: 'ignored' },
      },
    ];
    for (const { label, event, outcome, column } of cases) {
      const request = sign(event);
      const result = await receiver.receive({ body: request.bytes, headers: request.headers });
      expect(result.outcome, label).toBe(outcome);
      const row = await storedRow(harness, result.id!);
      expect(row, label).toMatchObject(column);
      expect(bytesOf(row.body).equals(Buffer.from(request.bytes)), `${label}: body bytes`).toBe(true);
    }
  });

  it('keeps event keys apart: tick_ids differing only by \\u0000 and a literal backslash-0 are two deliveries', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const withTick = (tick_id: string) => budgetEvent('app:budget:cap', at('.1'), { tick_id });
    // Backslash-zero first: an escaping that maps NUL to `\0` without doubling `\` would make the NUL one its duplicate.
    const backslash = await harness.deliver(receiver, withTick('tick-x\\0'));
    const nul = await harness.deliver(receiver, withTick('tick-x\u0000'));
    expect([backslash.outcome, nul.outcome]).toEqual(['accepted', 'accepted']);
    expect(nul.id).not.toBe(backslash.id);
    // The NUL key still deduplicates: the same event re-signed with another t is a duplicate.
    expect((await harness.deliver(receiver, withTick('tick-x\u0000'), { t: nowSeconds() - 7 })).outcome).toBe('duplicate');
    expect((await harness.deliver(receiver, withTick('tick-x\\0'), { t: nowSeconds() - 7 })).outcome).toBe('duplicate');
    const rows = await harness.db.query<{ tick_id: string }>(`SELECT tick_id FROM ${harness.table} ORDER BY id`);
    expect(rows.map((row) => row.tick_id)).toEqual(['tick-x\\0', 'tick-x\uFFFD']);
  });
});

// ── 5. migrate() of two tables in one new schema ────────────────────────────────────────────────

describe('regression: migrate() of two tables into one new schema at once (pg)', () => {
  it('10 concurrent pairs, each on its own pools: none fails and every table exists', async () => {
    const schemas = Array.from({ length: 10 }, freshSchemaName);
    const pools = schemas.flatMap(() => [pgPoolTo(), pgPoolTo()]);
    const admin = pgPoolTo();
    try {
      const migrations = schemas.flatMap((schema, index) => [
        createInbox({ database: pools[2 * index] as unknown, table: `${schema}.orders_inbox` }).migrate(),
        createInbox({ database: pools[2 * index + 1] as unknown, table: `${schema}.billing_inbox` }).migrate(),
      ]);
      const results = await within(Promise.allSettled(migrations), 30_000, 'the migrations');
      const failures = results.flatMap((result) => (result.status === 'rejected' ? [String((result.reason as Error).message)] : []));
      expect(failures).toEqual([]);
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = ANY($1) AND tablename IN ('orders_inbox', 'billing_inbox')`,
        [schemas],
      );
      expect(rows[0]!.n).toBe(20);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
      for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});

// ── 6 and 9. work() refuses a pool too small for its concurrency, and a poll interval no timer can wait ──

/** What `work()` throws; a worker it started instead (the defect) is stopped, so a regression fails without leaking it. */
function workError(inbox: Inbox<unknown>, options: WorkOptions): unknown {
  try {
    const worker = inbox.work(createReceiver<unknown>({ secrets: SECRETS, inbox, logger: () => {} }), options);
    void worker.stop();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('regression: work() options a worker cannot honour throw at once (pg, postgres.js)', () => {
  it('concurrency 4 on a pg Pool or postgres.js with max 3 throws a RangeError naming max; max 6 works', async () => {
    const harness = await openInbox('pg');
    const small = new pg.Pool({ connectionString: POSTGRES_URL, max: 3, connectionTimeoutMillis: 5000 });
    const enough = new pg.Pool({ connectionString: POSTGRES_URL, max: 6, connectionTimeoutMillis: 5000 });
    const smallSql = postgres(POSTGRES_URL, { max: 3, onnotice: () => {} });
    const enoughSql = postgres(POSTGRES_URL, { max: 6, onnotice: () => {} });
    for (const pool of [small, enough]) pool.on('error', () => {});
    try {
      for (const database of [small, smallSql]) {
        const inbox = createInbox({ database: database as unknown, table: harness.table });
        const error = workError(inbox, { ...FAST, concurrency: 4 });
        expect(error).toBeInstanceOf(RangeError);
        expect((error as Error).message).toMatch(/max \(3\) must be at least 6/);
      }
      for (const [index, database] of [enough, enoughSql].entries()) {
        const inbox = createInbox({ database: database as unknown, table: harness.table });
        const receiver = createReceiver<unknown>({ secrets: SECRETS, inbox });
        let runs = 0;
        onBudget(receiver, () => void runs++);
        const worker = inbox.work(receiver, { ...FAST, concurrency: 4 });
        try {
          const request = sign(budgetEvent('app:budget:cap', at(`.${index + 1}`)));
          expect((await within(receiver.receive({ body: request.bytes, headers: request.headers }), 5000, 'receive()')).outcome).toBe(
            'accepted',
          );
          await within(worker.drain(), 5000, 'drain()');
          expect(runs).toBe(1);
        } finally {
          await within(worker.stop(), 5000, 'stop()');
        }
      }
    } finally {
      await Promise.all([small.end(), enough.end(), smallSql.end({ timeout: 5 }), enoughSql.end({ timeout: 5 })]);
    }
  });

  it('pollIntervalMs 2 ** 31 (past the longest timer) throws a RangeError; 2 ** 31 - 1 is accepted', async () => {
    const harness = await openInbox('pg');
    const receiver = harness.receiver();
    const error = workError(harness.inbox, { pollIntervalMs: 2 ** 31 });
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toMatch(/pollIntervalMs must be at most 2147483647/);
    const worker = harness.work(receiver, { pollIntervalMs: 2 ** 31 - 1 });
    await within(worker.stop(), 5000, 'stop()');
  });
});

// ── 7. drain() rejects with a WebhookInboxError ─────────────────────────────────────────────────

describe.each(CLIENT_KINDS)('regression: errors name what is wrong (%s)', (kind) => {
  it('on a never-migrated table drain() rejects with inbox_not_migrated, and receive() and the worker log that code', async () => {
    const harness = await openInbox(kind, { migrate: false });
    const records: ReceiverLogRecord[] = [];
    const receiver = harness.receiver({ logger: (record) => void records.push(record) });
    const rejected = await rejectionOf(harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1'))));
    expect(rejected).toMatchObject({ code: 'inbox_not_migrated', status: 500 });
    const worker = harness.work(receiver, { listen: false });
    const error = await rejectionOf(within(worker.drain(), 5000, 'drain()'));
    expect(error).toBeInstanceOf(WebhookInboxError);
    expect(error).toMatchObject({ code: 'inbox_not_migrated', status: 500 });
    await within(worker.stop(), 5000, 'stop()');
    // The log record is named after the code (it said inbox_unavailable for every error before).
    expect(records.filter((record) => record.level === 'error').map(({ event, code }) => ({ event, code }))).toEqual([
      { event: 'inbox_not_migrated', code: 'inbox_not_migrated' },
      { event: 'inbox_not_migrated', code: 'inbox_not_migrated' },
    ]);
  });
});

describe('regression: drain() on a database that refuses connections rejects with inbox_unavailable', () => {
  it.each(['pg', 'postgres'] as const)('%s', async (kind) => {
    const url = await connectionRefusedUrl();
    // No backoff: postgres.js otherwise waits longer after each refused connection (up to 20 s), and
    // the worker's fast poll makes many; the test is about the error, not postgres.js's reconnect pacing.
    const database =
      kind === 'pg'
        ? new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5000 })
        : postgres(url, { max: 2, backoff: () => 0, onnotice: () => {} });
    if (database instanceof pg.Pool) database.on('error', () => {});
    try {
      const inbox = createInbox({ database: database as unknown, table: 'nowhere.deliveries' });
      const receiver = createReceiver<unknown>({ secrets: SECRETS, inbox, logger: () => {} });
      const worker = inbox.work(receiver, { ...FAST, concurrency: 1, listen: false });
      const error = await rejectionOf(within(worker.drain(), 10_000, 'drain()'));
      await within(worker.stop(), 5000, 'stop()');
      expect(error).toBeInstanceOf(WebhookInboxError);
      expect(error).toMatchObject({ code: 'inbox_unavailable', status: 503 });
    } finally {
      await (database instanceof pg.Pool ? database.end() : database.end({ timeout: 1 }));
    }
  });
});

// ── 8. Filters with empty lists, out-of-range ids, cursors and times ────────────────────────────

describe.each(CLIENT_KINDS)('regression: filters past what a column holds (%s)', (kind) => {
  it('action: [] is an empty page, ids past int8 match nothing, a cursor past int8 is a TypeError, year 1 and 9999 bound normally', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const first = (await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')))).id!;
    const second = (await harness.deliver(receiver, budgetEvent('app:budget:threshold', at('.2')))).id!;

    expect(await harness.inbox.list({ action: [] })).toEqual({ deliveries: [], next: undefined });
    expect(await harness.inbox.get('9999999999999999999')).toBeUndefined();
    expect(await harness.inbox.retry('9999999999999999999')).toBe(0);
    await expect(harness.inbox.list({ after: '99999999999999999999.1' })).rejects.toThrow(TypeError);
    const ids = (page: { deliveries: readonly { id: string }[] }) => page.deliveries.map((delivery) => delivery.id);
    expect(ids(await harness.inbox.list({ from: '0001-01-01T00:00:00Z' }))).toEqual([first, second]);
    expect(ids(await harness.inbox.list({ to: '9999-12-31T00:00:00Z' }))).toEqual([first, second]);
    expect(ids(await harness.inbox.list({ from: '0001-01-01T00:00:00Z', to: '9999-12-31T00:00:00Z' }))).toEqual([first, second]);
  });
});

// ── 10. A read-only database is unavailable (503), not a refused statement ───────────────────────

describe('regression: a read-only database (a standby after a failover) is inbox_unavailable', () => {
  it('pg Pool with default_transaction_read_only=on: receive() rejects 503 inbox_unavailable past the bound and stores nothing', async () => {
    const harness = await openInbox('pg');
    const readOnly = new pg.Pool({
      connectionString: POSTGRES_URL,
      max: 2,
      options: '-c default_transaction_read_only=on',
      connectionTimeoutMillis: 5000,
    });
    readOnly.on('error', () => {});
    try {
      const records: ReceiverLogRecord[] = [];
      // A failover can pass (issue 18): the delivery waits up to storeRetry.maxWaitMs, short here.
      const inbox = createInbox({ database: readOnly as unknown, table: harness.table, storeRetry: { maxWaitMs: 300 } });
      const receiver = createReceiver<unknown>({ secrets: SECRETS, inbox, logger: (record) => void records.push(record) });
      const request = sign(budgetEvent('app:budget:cap', at('.1')));
      const error = await rejectionOf(within(receiver.receive({ body: request.bytes, headers: request.headers }), 5000, 'receive()'));
      expect(error).toBeInstanceOf(WebhookInboxError);
      expect(error).toMatchObject({ code: 'inbox_unavailable', status: 503 });
      expect(records.map(({ event, code }) => ({ event, code }))).toEqual([
        { event: 'inbox_outage', code: '25006' },
        { event: 'inbox_unavailable', code: 'inbox_unavailable' },
      ]);
      expect(await harness.count()).toBe(0);
    } finally {
      await readOnly.end();
    }
  });
});

// ── 11. A retry is not a replay ─────────────────────────────────────────────────────────────────

describe.each(SCENARIO_KINDS)('regression: retry() clears the replay mark (%s)', (kind) => {
  it('a replayed delivery that died and is retried is logged as processed, not replayed', async () => {
    const harness = await openInbox(kind);
    const records: ReceiverLogRecord[] = [];
    const receiver = harness.receiver({ logger: (record) => void records.push(record) });
    let failing = false;
    onBudget(receiver, () => {
      if (failing) throw new Error('fails after the replay');
    });
    const { id } = await harness.deliver(receiver, budgetEvent('app:budget:cap', at('.1')));
    const worker = harness.work(receiver, { maxAttempts: 1 });
    await within(worker.drain(), 10_000, 'first drain');

    failing = true;
    expect(await harness.inbox.replay({ ids: [id!] })).toBe(1);
    await within(worker.drain(), 10_000, 'drain of the replay');
    expect(await harness.count(`state = 'dead'`)).toBe(1);

    failing = false;
    expect(await harness.inbox.retry(id!)).toBe(1);
    await within(worker.drain(), 10_000, 'drain of the retry');
    await within(worker.stop(), 5000, 'stop()'); // the worker logs after it records: stop() waits for that

    const about = records.filter((record) => record.deliveryId === id).map(({ event, attempt }) => ({ event, attempt }));
    expect(about).toEqual([
      { event: 'accepted', attempt: undefined },
      { event: 'processed', attempt: 1 },
      { event: 'dead', attempt: 2 },
      { event: 'processed', attempt: 3 },
    ]);
    const [row] = await harness.db.query(`SELECT state, replayed_at FROM ${harness.table} WHERE id = $1`, [id]);
    expect(row).toEqual({ state: 'done', replayed_at: null });
  });
});

// ── list() pages in numeric id order, whatever the ids' digits ──────────────────────────────────

describe.each(SCENARIO_KINDS)('regression: list() orders ties by the numeric id, not its text (%s)', (kind) => {
  it('120 deliveries of one nanosecond (ids 1 to 120) page in id order, both ways, none skipped', async () => {
    const harness = await openInbox(kind);
    const receiver = harness.receiver();
    const timestamp = at('.000000001');
    for (let index = 0; index < 120; index++) {
      const result = await harness.deliver(receiver, budgetEvent('app:budget:threshold', timestamp, { spend_usd: String(index) }));
      expect(result.outcome).toBe('accepted');
    }
    const expected = Array.from({ length: 120 }, (_, index) => String(index + 1));
    for (const order of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      let after: string | undefined;
      do {
        const page = await harness.inbox.list({ limit: 7, order, ...(after === undefined ? {} : { after }) });
        seen.push(...page.deliveries.map((delivery) => delivery.id));
        after = page.next;
      } while (after !== undefined);
      // Before the fix, ORDER BY id meant the `id::text AS id` output column: "99" sorted after "120",
      // and the numeric cursor then skipped ids 100 to 120 (ascending) or 10 to 99 (descending).
      expect(seen).toEqual(order === 'asc' ? expected : [...expected].reverse());
    }
  }, 60_000);
});

describe('a worker on a table not migrated yet says so in one sentence, and names its recovery inbox_reachable', () => {
  it('logs the error once without a doubled stop (".;"), then inbox_reachable once migrate() made the table', async () => {
    const db = await openDatabase('pg');
    try {
      const records: ReceiverLogRecord[] = [];
      const inbox = createInbox({ database: db.database, table: `${db.schema}.later` });
      const receiver = createReceiver({ secrets: SECRETS, inbox, logger: (record) => records.push(record) });
      const worker = inbox.work(receiver, { listen: false, pollIntervalMs: 20 });
      try {
        await expect.poll(() => records.filter((record) => record.level === 'error').length, { timeout: 10_000 }).toBe(1);
        const failed = records.find((record) => record.level === 'error')!;
        expect(failed).toMatchObject({ event: 'inbox_not_migrated', code: 'inbox_not_migrated' });
        expect(failed.message).toMatch(/[^.]; retrying every 20 ms$/);
        await inbox.migrate();
        await expect.poll(() => records.filter((record) => record.event === 'inbox_reachable').length, { timeout: 10_000 }).toBe(1);
        expect(records.find((record) => record.event === 'inbox_reachable')).toMatchObject({
          level: 'info',
          message: expect.stringMatching(/: the inbox database is reachable again$/),
        });
      } finally {
        await worker.stop();
      }
    } finally {
      await db.close();
    }
  });
});
