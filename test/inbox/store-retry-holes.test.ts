// Outage holding without holes (issue 38, point 5). A pg Pool without connectionTimeoutMillis kept
// every delivery refused for as long as the process lived once a database that stalled came back (60
// of 60): its connects never end, and the pool stays full of them. Such a pool is now refused at
// start-up with the fix; with a bound, deliveries are accepted again as soon as the database answers.
// Byte-identical copies held at once were charged nothing while each held its own body (200 replays
// of a 900 KiB delivery held 354 MiB against a 4 MiB cap, 1,000 ended the process): each costs its
// bytes now. Real PostgreSQL behind the TCP proxy; the shared server is untouched.
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReceiver, type ReceiveResult } from '../../src/index.js';
import { createInbox } from '../../src/inbox.js';
import { heldCost, processHeld } from '../../src/inbox/store/outage/held.js';
import { createSignedRequestSync, createTestEvent, type SignedRequest } from '../../src/testing/index.js';
import { openDatabase, POSTGRES_URL } from './databases.js';
import { startTcpProxy } from './fixtures/tcp-proxy.mjs';

const ACTION = 'app:budget:auto-shutdown:fired';
const secret = randomBytes(32).toString('hex');

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await vi.waitFor(() => expect(processHeld.count).toBe(0), { timeout: 10_000 });
});

function delivery(padBytes = 0): SignedRequest {
  const tickId = `holes-${process.pid}-${randomBytes(6).toString('hex')}`;
  return createSignedRequestSync(createTestEvent(ACTION, { data: { tick_id: tickId }, extraData: { pad: 'x'.repeat(padBytes) } }), {
    secrets: secret,
  });
}
const tickOf = (request: SignedRequest) => (JSON.parse(request.body) as { data: { tick_id: string } }).data.tick_id;

function settled(promise: Promise<ReceiveResult>) {
  return promise.then(
    (result) => ({ ok: true as const, result }),
    (error: unknown) => ({ ok: false as const, error: error as Error & { code?: string; status?: number } }),
  );
}

/** The shared PostgreSQL behind a proxy, a migrated table, and an inbox on `pool` made through the proxy. */
async function throughProxy(makePool: (url: string) => pg.Pool, storeRetry: { maxWaitMs: number; maxBufferedBytes?: number }) {
  const db = await openDatabase('pg');
  cleanups.push(() => db.close());
  await createInbox({ database: db.database, table: db.table }).migrate();
  const target = new URL(POSTGRES_URL);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  cleanups.push(() => proxy.close());
  const pool = makePool(proxy.url(POSTGRES_URL));
  pool.on('error', () => {});
  cleanups.push(() => pool.end());
  const inbox = createInbox({ database: pool, table: db.table, storeRetry, recordRefusals: false });
  const receiver = createReceiver<unknown>({ secrets: secret, inbox, logger: () => {} });
  const receive = (request: SignedRequest, body: Uint8Array = request.bytes) =>
    settled(receiver.receive({ body, headers: request.headers }));
  const ticks = async () => (await db.query<{ tick_id: string }>(`SELECT tick_id FROM ${db.table}`)).map((row) => row.tick_id);
  return { proxy, receive, ticks };
}

describe('a pg Pool that would wait forever for a connect', () => {
  it.each([
    ['without connectionTimeoutMillis', {}],
    ['with connectionTimeoutMillis: 0', { connectionTimeoutMillis: 0 }],
  ])('is refused at start-up, %s, with the fix', (_, options) => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, ...options });
    cleanups.push(() => pool.end());
    expect(() => createInbox({ database: pool })).toThrow(TypeError);
    expect(() => createInbox({ database: pool })).toThrow(/connectionTimeoutMillis.*never end.*connectionTimeoutMillis: 5000/s);
  });

  it(
    'with a bound: after the database stalled and its connections were lost, new deliveries are accepted again at once',
    { timeout: 30_000 },
    async () => {
      const { proxy, receive, ticks } = await throughProxy(
        (url) => new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 1000 }),
        { maxWaitMs: 1500 },
      );
      // The host is gone: every connection made now is accepted and never answered, even afterwards.
      proxy.blackhole();
      const during = await Promise.all(Array.from({ length: 20 }, () => receive(delivery())));
      for (const answer of during) expect(answer.ok ? undefined : answer.error).toMatchObject({ code: 'inbox_unavailable', status: 503 });
      proxy.unstall();

      // Without a bound (pg's default), 60 of 60 were refused here for as long as the process lived.
      const back = Date.now();
      const after = Array.from({ length: 30 }, () => delivery());
      const answers = await Promise.all(after.map((request) => receive(request)));
      expect(answers.map((answer) => (answer.ok ? answer.result.outcome : answer.error.code))).toEqual(after.map(() => 'accepted'));
      // A connect bound (1 s) and a probe step (1 s at most) past the database's return, with room for a loaded machine.
      expect(Date.now() - back).toBeLessThan(8000);
      expect((await ticks()).sort()).toEqual(after.map(tickOf).sort());
    },
  );
});

/** `gc()` in this worker, to measure what is still referenced rather than what the collector has not reached yet. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Each takes tens of ms on a loaded machine (signature, parse and body key of 900 KiB): about 40 s in all. */
const REPLAYS = 1000;

describe('1,000 replays of one 900 KiB delivery while the database is away', () => {
  it(
    'hold what the cap holds, the rest refused at once; the delivery is stored once and the held copies answered duplicate',
    { timeout: 240_000 },
    async () => {
      const gc = collector();
      const original = delivery(900 * 1024);
      const cost = heldCost(original.bytes);
      const cap = 4 * 1024 * 1024;
      const fit = Math.floor(cap / cost);
      expect(fit).toBe(2);
      const { proxy, receive, ticks } = await throughProxy(
        (url) => new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 2000 }),
        { maxWaitMs: 180_000, maxBufferedBytes: cap },
      );
      proxy.stop();
      gc();
      const before = process.memoryUsage();

      // Each replay with its own copy of the bytes, as each request has; they arrive over a few turns
      // of the event loop, so the test holds no more of them at once than the inbox does.
      const answers: ReturnType<typeof receive>[] = [];
      for (let i = 0; i < REPLAYS; i++) {
        answers.push(receive(original, Buffer.from(original.bytes)));
        if (i % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
      }
      let answered = 0;
      for (const answer of answers) void answer.then(() => answered++);
      await vi.waitFor(() => expect(answered).toBe(REPLAYS - fit), { timeout: 150_000, interval: 50 });

      // The inbox's own accounting: what fits, and no more.
      expect(processHeld.count).toBe(fit);
      expect(processHeld.bytes).toBe(fit * cost);
      expect(processHeld.bytes).toBeLessThanOrEqual(cap);
      gc();
      const now = process.memoryUsage();
      const grown = now.heapUsed + now.arrayBuffers - (before.heapUsed + before.arrayBuffers);
      // 1,000 held bodies would be 879 MiB, parsed twice that; what is held is 2 of them.
      expect(grown).toBeLessThan(64 * 1024 * 1024);

      await proxy.resume();
      const all = await Promise.all(answers);
      const outcomes = all.map((answer) => (answer.ok ? answer.result.outcome : answer.error.code));
      expect(outcomes.filter((outcome) => outcome === 'accepted')).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome === 'duplicate')).toHaveLength(fit - 1);
      const refused = all.filter((answer) => !answer.ok);
      expect(refused).toHaveLength(REPLAYS - fit);
      for (const answer of refused) {
        expect(answer.ok ? undefined : answer.error).toMatchObject({ code: 'inbox_unavailable', status: 503 });
        expect(answer.ok ? '' : answer.error.message).toMatch(/byte-identical copy.*storeRetry\.maxBufferedBytes.*Nothing is lost/s);
      }
      expect(await ticks()).toEqual([tickOf(original)]);
    },
  );
});
