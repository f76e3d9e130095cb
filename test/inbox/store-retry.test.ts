// A database blip loses nothing (issue 18, point 4): while PostgreSQL is away for a reason that can
// pass, receive() holds the verified delivery and stores it when the database is back; past the
// bounds it answers 503 and nothing is stored half-way. The outage is caused by a TCP proxy between
// the inbox's client and the shared PostgreSQL, which the test stops, resets and resumes: the
// shared server itself is never touched. Real PostgreSQL, pg Pool and postgres.js.
import { randomBytes } from 'node:crypto';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createReceiver, type ReceiveResult, type ReceiverLogRecord } from '../../src/index.js';
import { createInbox, WebhookInboxError, type StoreRetryOptions } from '../../src/inbox.js';
import { heldCost, processHeld } from '../../src/inbox/store/outage/held.js';
import { createSignedRequestSync, createTestEvent, type SignedRequest } from '../../src/testing/index.js';
import { ManualClock, sleep, until, within, type ManualTimer } from '../kit/time.js';
import type { TestDatabase } from './databases.js';
import { behindProxy, type ProxiedKind as Kind } from './fixtures/proxied.js';
import type { TcpProxy } from './fixtures/tcp-proxy.mjs';

const ACTION = 'app:budget:auto-shutdown:fired';
const secret = randomBytes(32).toString('hex');

interface Setup {
  db: TestDatabase;
  proxy: TcpProxy;
  records: ReceiverLogRecord[];
  receiver: ReturnType<typeof createReceiver<unknown>>;
  inbox: ReturnType<typeof createInbox<unknown>>;
  receive(request: SignedRequest): Promise<ReceiveResult>;
  /** Stored rows' replay keys by tick id, read past the proxy. */
  stored(): Promise<Map<string, number>>;
}

/** `clock`: the inbox's, for the tests that count its bounds; the steady-load tests run on the system's. */
async function openStore(kind: Kind, storeRetry: StoreRetryOptions, max = 8, clock?: ManualClock): Promise<Setup> {
  const { db, proxy, database } = await behindProxy(kind, max);
  const records: ReceiverLogRecord[] = [];
  const inbox = createInbox({ database, table: db.table, storeRetry, ...(clock === undefined ? {} : { clock }) });
  const receiver = createReceiver<unknown>({ secrets: secret, inbox, logger: (record) => records.push(record) });
  return {
    db,
    proxy,
    records,
    receiver,
    inbox,
    receive: (request) => receiver.receive({ body: request.bytes, headers: request.headers }),
    async stored() {
      const rows = await db.query<{ tick_id: string; n: string }>(`SELECT tick_id, count(*)::text AS n FROM ${db.table} GROUP BY tick_id`);
      return new Map(rows.map((row) => [row.tick_id, Number(row.n)]));
    },
  };
}

/**
 * The circuit's probe timer (50 ms doubling to 1 s, jittered down to half), one that does not hold
 * the process open; the deliveries' bounds do. Not the refusals' flush (5 s, and it does not hold
 * the process open either): fired while a probe's attempt is under way, it moved the clock past the
 * outage's end, and `durationMs` no longer matched the clock.
 */
const isProbe = (timer: ManualTimer) => !timer.keepAlive && timer.ms <= 1000;

/** Fires the probe (alone: no deadline moves with it) until `answer` settles: the database is back, the first probe reaches it. */
async function probeUntilAnswered<T>(clock: ManualClock, answer: Promise<T>): Promise<T> {
  let settled = false;
  void answer.then(
    () => (settled = true),
    () => (settled = true),
  );
  await until(() => {
    if (settled) return;
    clock.fireNext(isProbe);
    throw new Error('not answered yet');
  });
  return answer;
}

let sequence = 0;
/** A distinct delivery: its own tick_id. */
function delivery(): { tickId: string; request: SignedRequest } {
  const tickId = `tick-${process.pid}-${++sequence}-${randomBytes(4).toString('hex')}`;
  return { tickId, request: createSignedRequestSync(createTestEvent(ACTION, { data: { tick_id: tickId } }), { secrets: secret }) };
}

const outcomeOf = (promise: Promise<ReceiveResult>) =>
  promise.then(
    (result) => ({ ok: true as const, result, at: Date.now() }),
    (error: unknown) => ({ ok: false as const, error, at: Date.now() }),
  );
type Outcome = Awaited<ReturnType<typeof outcomeOf>>;

/**
 * A rack under load: `perSecond` distinct deliveries a second for `seconds`, each sent three times
 * (the copies 0, 20 and 60 ms apart), while `fault` runs. `fault` gets `sent(n)`, which resolves once
 * the rack has sent its n-th delivery: a fault starts at a point of the load, not at a time.
 */
async function underLoad(setup: Setup, perSecond: number, seconds: number, fault: (sent: (n: number) => Promise<void>) => Promise<void>) {
  const sent: { tickId: string; copies: Promise<Outcome>[] }[] = [];
  const total = perSecond * seconds;
  const loading = (async () => {
    const start = Date.now();
    for (let i = 0; i < total; i++) {
      const wait = start + (i * 1000) / perSecond - Date.now();
      if (wait > 0) await sleep(wait); // the rack's pace
      const { tickId, request } = delivery();
      const copies = [0, 20, 60].map((delay) => outcomeOf(sleep(delay).then(() => setup.receive(request)))); // the copies' pace
      sent.push({ tickId, copies });
    }
  })();
  const reached = (n: number) => until(() => expect(sent.length).toBeGreaterThanOrEqual(n), 30_000, 5).then(() => {});
  await Promise.all([loading, fault(reached)]);
  const answered = await Promise.all(sent.map(async ({ tickId, copies }) => ({ tickId, outcomes: await Promise.all(copies) })));
  return answered;
}

/** Nothing lost, nothing doubled: every copy answered, each delivery stored exactly once. */
async function expectNothingLost(setup: Setup, answered: Awaited<ReturnType<typeof underLoad>>) {
  const failures = answered.flatMap(({ outcomes }) => outcomes.filter((outcome) => !outcome.ok));
  expect(failures.map((failure) => (failure.ok ? '' : String(failure.error))).slice(0, 3)).toEqual([]);
  for (const { tickId, outcomes } of answered) {
    const results = outcomes.map((outcome) => (outcome.ok ? outcome.result : undefined));
    expect(
      results.every((result) => result?.outcome === 'accepted' || result?.outcome === 'duplicate'),
      tickId,
    ).toBe(true);
    const ids = new Set(results.filter((result) => result?.outcome === 'accepted').map((result) => result?.id));
    // At least one copy says stored, and every copy that does names the same row.
    expect(ids.size, tickId).toBe(1);
  }
  const stored = await setup.stored();
  expect(stored.size).toBe(answered.length);
  expect([...stored.values()].filter((n) => n !== 1)).toEqual([]);
  expect(answered.every(({ tickId }) => stored.get(tickId) === 1)).toBe(true);
}

function outageRecords(records: readonly ReceiverLogRecord[]) {
  return {
    began: records.filter((record) => record.event === 'inbox_outage'),
    ended: records.filter((record) => record.event === 'inbox_outage_ended'),
  };
}

/** Once at its start, once at its end; never a body or a signature. */
/** `waited`, `durationMs`: exact (on the test's clock); `minWaited`, `minDurationMs`: at least (the steady-load tests, on the system's). */
function expectOutageLoggedOnce(
  setup: Setup,
  expected: { refused: number } & ({ waited: number; durationMs: number } | { minWaited: number; minDurationMs: number }),
) {
  const { began, ended } = outageRecords(setup.records);
  expect(began).toHaveLength(1);
  expect(began[0]).toMatchObject({ level: 'warn', event: 'inbox_outage', code: expect.any(String) as string });
  expect(ended).toHaveLength(1);
  expect(ended[0]).toMatchObject({ level: expected.refused > 0 ? 'error' : 'info', refused: expected.refused });
  if ('waited' in expected)
    expect({ waited: ended[0]!.waited, durationMs: ended[0]!.durationMs }).toEqual({
      waited: expected.waited,
      durationMs: expected.durationMs,
    });
  else {
    expect(ended[0]!.waited).toBeGreaterThanOrEqual(expected.minWaited);
    expect(ended[0]!.durationMs).toBeGreaterThanOrEqual(expected.minDurationMs);
  }
  const text = JSON.stringify(setup.records);
  expect(text).not.toContain('v1=');
  expect(text).not.toContain('\\"action\\"'); // a body, quoted inside a record
}

describe('a database stop during a steady load', () => {
  // 3 s: past the probes' longest backoff step (1 s, reached after 1.55 s) and the worker's 2 s lease,
  // with load before, during and after the stop.
  it('3 s on pg: every copy is answered 200, each delivery stored once, and the worker runs every one', { timeout: 60_000 }, async () => {
    const setup = await openStore('pg', { maxWaitMs: 15_000 });
    const ran = new Map<string, number>();
    setup.receiver.on(ACTION, (_event, context) => {
      ran.set(context.delivery.id, (ran.get(context.delivery.id) ?? 0) + 1);
    });
    const worker = setup.inbox.work(setup.receiver, {
      concurrency: 2,
      pollIntervalMs: 100,
      leaseSeconds: 2,
      backoff: { baseMs: 50, maxMs: 200 },
    });
    onTestFinished(() => worker.stop());
    const answered = await underLoad(setup, 40, 5, async (sent) => {
      await sent(20); // half a second of load stored before the stop
      setup.proxy.stop();
      await sleep(3000); // the outage's length: what the scenario is, not a wait for anything
      await setup.proxy.resume();
    });
    await expectNothingLost(setup, answered);
    // Deliveries stored after waiting: some copies were held for most of the stop.
    expectOutageLoggedOnce(setup, { refused: 0, minWaited: 100, minDurationMs: 2500 });
    // The worker got through the outage too: every stored delivery ran (a handler cut mid-commit
    // may run again: exactly-once effects go through context.transaction, see outage.test.ts).
    await until(async () => {
      const states = await setup.db.query(`SELECT state, count(*)::text AS n FROM ${setup.db.table} GROUP BY state`);
      expect(states).toEqual([{ state: 'done', n: String(answered.length) }]);
    }, 20_000);
    expect(ran.size).toBe(answered.length);
  });

  it('1.5 s on postgres.js: nothing lost, nothing doubled', { timeout: 30_000 }, async () => {
    const setup = await openStore('postgres', { maxWaitMs: 10_000 });
    const answered = await underLoad(setup, 40, 3, async (sent) => {
      await sent(28); // 0.7 s of load before the stop
      setup.proxy.stop();
      await sleep(1500); // the outage's length: what the scenario is, not a wait for anything
      await setup.proxy.resume();
    });
    await expectNothingLost(setup, answered);
    // postgres.js queues some queries itself while it cannot connect: those never fail, never wait here.
    expectOutageLoggedOnce(setup, { refused: 0, minWaited: 1, minDurationMs: 1000 });
  });
});

describe.each<Kind>(['pg', 'postgres'])('through %s', (kind) => {
  it('a restart (every connection reset, twice) during a steady load loses nothing', { timeout: 30_000 }, async () => {
    const setup = await openStore(kind, { maxWaitMs: 10_000 });
    const answered = await underLoad(setup, 40, 3, async (sent) => {
      // Two restarts a little apart, each in the middle of the load (0.8 s and 1.5 s at the rack's pace).
      for (const n of [32, 60]) {
        await sent(n);
        setup.proxy.reset();
      }
    });
    await expectNothingLost(setup, answered);
  });

  it(
    'a stop longer than maxWaitMs: 503 past the bound; the rows are those answered 200, and any committed after its 503 says so',
    { timeout: 20_000 },
    async () => {
      const clock = new ManualClock();
      const setup = await openStore(kind, { maxWaitMs: 400 }, 8, clock);
      const batch = (n: number) => Array.from({ length: n }, delivery);
      const before = batch(5);
      for (const { request } of before) expect((await setup.receive(request)).outcome).toBe('accepted');

      setup.proxy.stop();
      const during = batch(5);
      const answers = during.map(({ request }) => outcomeOf(setup.receive(request)));
      // Held, not refused at once: all five wait (their bounds set) until the clock reaches 400 ms.
      await until(() => expect(clock.live.filter((timer) => timer.ms === 400)).toHaveLength(5));
      await clock.advance(399);
      expect(setup.records.filter((record) => record.event === 'inbox_unavailable')).toEqual([]);
      await clock.advance(1);
      for (const outcome of await within(Promise.all(answers), 10_000, 'the deliveries past their bound')) {
        expect(outcome.ok).toBe(false);
        if (outcome.ok) continue;
        expect(outcome.error).toBeInstanceOf(WebhookInboxError);
        expect(outcome.error).toMatchObject({ code: 'inbox_unavailable', status: 503 });
        expect((outcome.error as Error).message).toMatch(/storeRetry\.maxWaitMs \(400 ms/);
      }
      await setup.proxy.resume();
      const after = batch(5);
      expect((await probeUntilAnswered(clock, setup.receive(after[0]!.request))).outcome).toBe('accepted');
      for (const { request } of after.slice(1)) expect((await setup.receive(request)).outcome).toBe('accepted');

      // Answered 503 at the bound, an attempt still queued in the driver (postgres.js waits for its
      // reconnect) goes on and may commit once the database is back: then its row stands, and says so.
      const answered200 = [...before, ...after].map(({ tickId }) => tickId).sort();
      const lateRecords = () =>
        setup.records.filter((record) => record.event === 'inbox_stored_after_refusal').map((record) => record.tickId);
      await vi.waitFor(async () => {
        const late = [...(await setup.stored()).keys()].filter((tickId) => !answered200.includes(tickId));
        expect(late.every((tickId) => during.some((sent) => sent.tickId === tickId))).toBe(true);
        expect(lateRecords().sort()).toEqual(late.sort());
      });
      expect([...(await setup.stored()).keys()].sort()).toEqual([...answered200, ...lateRecords()].sort());
      // From the first failure (at 0 on the test's clock) to the probe that reached the database.
      // The first delivery after the resume waited for that probe too: six waited.
      expectOutageLoggedOnce(setup, { refused: 5, waited: 6, durationMs: clock.now() });
      // Each refused delivery is still logged on its own, loudly: the rack will not resend it.
      expect(setup.records.filter((record) => record.event === 'inbox_unavailable' && record.level === 'error')).toHaveLength(5);
    },
  );

  it('the byte cap: a delivery that would hold more is refused at once; those waiting are stored', { timeout: 20_000 }, async () => {
    const [first, second, third] = [delivery(), delivery(), delivery()];
    // Room for two deliveries held (their body twice and the fixed part each, held.ts), not three.
    const clock = new ManualClock();
    const setup = await openStore(kind, { maxWaitMs: 8000, maxBufferedBytes: Math.floor(heldCost(first!.request.bytes) * 2.5) }, 8, clock);
    setup.proxy.stop();
    const waiting = [first!, second!].map(({ request }) => outcomeOf(setup.receive(request)));
    await until(() => expect(processHeld.count).toBe(2)); // both are waiting now
    // Refused at once: on a clock that never moves, no bound could pass.
    const refused = await within(outcomeOf(setup.receive(third!.request)), 10_000, 'the delivery past the cap');
    expect(refused.ok).toBe(false);
    expect(refused.ok ? undefined : refused.error).toMatchObject({ code: 'inbox_unavailable', status: 503 });
    expect(refused.ok ? '' : (refused.error as Error).message).toMatch(/storeRetry\.maxBufferedBytes/);
    await setup.proxy.resume();
    for (const outcome of await probeUntilAnswered(clock, Promise.all(waiting)))
      expect(outcome.ok && outcome.result.outcome).toBe('accepted');
    expect([...(await setup.stored()).keys()].sort()).toEqual([first!.tickId, second!.tickId].sort());
    expectOutageLoggedOnce(setup, { refused: 1, waited: 2, durationMs: clock.now() });
  });

  it(
    'a table gone while the database was away: inbox_not_migrated at once when it is back, not after the bound',
    { timeout: 20_000 },
    async () => {
      const clock = new ManualClock();
      const setup = await openStore(kind, { maxWaitMs: 10_000 }, 8, clock);
      setup.proxy.stop();
      const { request } = delivery();
      const waiting = outcomeOf(setup.receive(request));
      await until(() => expect(outageRecords(setup.records).began).toHaveLength(1));
      await setup.db.query(`DROP TABLE ${setup.db.table} CASCADE`);
      await setup.proxy.resume();
      // At the first probe that reaches it, not at the bound (10 s on a clock that the probes alone move).
      const outcome = await probeUntilAnswered(clock, waiting);
      expect(outcome.ok).toBe(false);
      expect(outcome.ok ? undefined : outcome.error).toMatchObject({ code: 'inbox_not_migrated', status: 500 });
      expect(clock.now()).toBeLessThan(10_000);
    },
  );

  it(
    'an INSERT that committed but whose answer was lost is answered accepted with its row, not duplicate',
    { timeout: 20_000 },
    async () => {
      // One connection, opened first, so the cut lands on the INSERT's own reply.
      const setup = await openStore(kind, { maxWaitMs: 5000 }, 1);
      const warm = delivery();
      expect((await setup.receive(warm.request)).outcome).toBe('accepted');
      setup.proxy.cutNextInsertReply();
      const { tickId, request } = delivery();
      const result = await setup.receive(request);
      expect(setup.proxy.cutReplies).toBe(1);
      expect(result.outcome).toBe('accepted');
      const rows = await setup.db.query<{ id: string }>(`SELECT id::text AS id FROM ${setup.db.table} WHERE tick_id = $1`, [tickId]);
      expect(rows).toEqual([{ id: result.id }]);
      // And a copy sent afterwards is a duplicate, as always.
      expect((await setup.receive(request)).outcome).toBe('duplicate');
    },
  );
});
