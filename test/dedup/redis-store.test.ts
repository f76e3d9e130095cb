import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisDedupStore } from '../../src/redis.js';
import { WebhookDedupError, createReceiver, type Receiver } from '../../src/index.js';
import { SECRET, T0, delivery, manualClock } from '../receiver/helpers.js';
import { REDIS_URL, redisAvailable, startPrivateRedis } from './redis-helpers.js';

const available = await redisAvailable();

describe.skipIf(!available)('RedisDedupStore against a real Redis', () => {
  const prefix = `rack-webhooks-test:${randomBytes(6).toString('hex')}:`;
  let ioredis: Redis;
  let nodeRedis: ReturnType<typeof createClient>;

  beforeAll(async () => {
    ioredis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    nodeRedis = createClient({ url: REDIS_URL });
    await nodeRedis.connect();
  });
  afterAll(async () => {
    const keys = await ioredis.keys(`${prefix}*`);
    if (keys.length > 0) await ioredis.del(...keys);
    ioredis.disconnect();
    await nodeRedis.quit();
  });

  function twoReceivers(handler: () => void) {
    const clock = manualClock();
    const make = (store: RedisDedupStore): Receiver =>
      createReceiver({ secrets: SECRET, now: clock.now, dedup: store, dedupFailure: 'closed' }).on(
        'app:budget:auto-shutdown:fired',
        handler,
      );
    return [make(new RedisDedupStore(ioredis, { prefix })), make(new RedisDedupStore(nodeRedis, { prefix }))] as const;
  }

  it('50 concurrent copies across two receivers (ioredis and node-redis) run the handler once', async () => {
    const handler = vi.fn();
    const [a, b] = twoReceivers(handler);
    const copy = delivery('app:budget:auto-shutdown:fired', { patch: { dry_run: 'same-body' } });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).receive(copy)));
    expect(handler).toHaveBeenCalledTimes(1);
    expect(results.filter((r) => r.outcome === 'processed')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(49);
  });

  it('50 concurrent bodies of the same event (new t, new time fields) run the handler once', async () => {
    const handler = vi.fn();
    const [a, b] = twoReceivers(handler);
    const copies = Array.from({ length: 50 }, (_, i) =>
      delivery('app:budget:auto-shutdown:fired', {
        t: T0 - (i % 5),
        patch: {
          shutdown_at: `2026-04-27T10:30:${String(i).padStart(2, '0')}Z`,
          tick_id: 'tick-2026-04-27T10:30:00Z-0a0b0c0d0e0f4a1b8c2d3e4f5a6b7c8d',
        },
      }),
    );
    await Promise.all(copies.map((copy, i) => (i % 2 === 0 ? a : b).receive(copy)));
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('50 concurrent bodies under one tick_id that say different things each run the handler once', async () => {
    const handler = vi.fn();
    const [a, b] = twoReceivers(handler);
    const events = Array.from({ length: 50 }, (_, i) =>
      delivery('app:budget:auto-shutdown:fired', {
        patch: { shut_down_services: `svc-${i}`, tick_id: 'tick-2026-04-27T10:30:00Z-1a0b0c0d0e0f4a1b8c2d3e4f5a6b7c8d' },
      }),
    );
    // Each one twice, from both processes at once: 50 distinct events, 50 handler runs.
    await Promise.all(events.flatMap((event) => [a.receive(event), b.receive(event)]));
    expect(handler).toHaveBeenCalledTimes(50);
  });

  it('keys carry their TTL in Redis itself', async () => {
    const clock = manualClock(T0 + 100);
    const ttlPrefix = `${prefix}ttl:`;
    const store = new RedisDedupStore(nodeRedis, { prefix: ttlPrefix });
    const receiver = createReceiver({ secrets: SECRET, now: clock.now, dedup: store, eventKeyTtl: 3600 });
    const copy = delivery('app:budget:auto-shutdown:failed', { patch: { dry_run: 'ttl-check' } });
    await receiver.receive(copy);
    const [eventKey, ...moreEventKeys] = await ioredis.keys(`${ttlPrefix}event:*`);
    const [replayKey, ...moreReplayKeys] = await ioredis.keys(`${ttlPrefix}body:*`);
    expect(moreEventKeys).toEqual([]);
    expect(moreReplayKeys).toEqual([]);
    const eventTtl = await ioredis.pttl(eventKey!);
    expect(eventTtl).toBeGreaterThan(3_590_000);
    expect(eventTtl).toBeLessThanOrEqual(3_600_000);
    // The body key: as long as the event key (longer than the time window's 201 s here).
    const replayTtl = await ioredis.pttl(replayKey!);
    expect(replayTtl).toBeGreaterThan(3_590_000);
    expect(replayTtl).toBeLessThanOrEqual(3_600_000);
  });

  it('holds a TTL longer than Redis can take (or Infinity) for 100 years instead of failing', async () => {
    const store = new RedisDedupStore(ioredis, { prefix: `${prefix}huge:` });
    expect(await store.claim('forever', Infinity)).toBe(true);
    expect(await store.claim('forever', 60)).toBe(false);
    expect(
      await store.claimAll([
        { key: 'a', ttlSeconds: 1e300 },
        { key: 'b', ttlSeconds: 60 },
      ]),
    ).toBe(true);
    expect(await ioredis.pttl(`${prefix}huge:forever`)).toBeGreaterThan(99 * 365 * 86_400_000);
  });

  it('claimAll sets nothing when one key is already held', async () => {
    const store = new RedisDedupStore(ioredis, { prefix });
    expect(await store.claim('atomic:a', 60)).toBe(true);
    expect(
      await store.claimAll([
        { key: 'atomic:b', ttlSeconds: 60 },
        { key: 'atomic:a', ttlSeconds: 60 },
      ]),
    ).toBe(false);
    expect(await ioredis.exists(`${prefix}atomic:b`)).toBe(0);
    await store.release('atomic:a');
    expect(
      await store.claimAll([
        { key: 'atomic:b', ttlSeconds: 60 },
        { key: 'atomic:a', ttlSeconds: 60 },
      ]),
    ).toBe(true);
  });

  it('refuses something that is not a Redis client', () => {
    expect(() => new RedisDedupStore({} as never)).toThrow(TypeError);
  });
});

describe('RedisDedupStore arguments (no server needed)', () => {
  const recording = () => {
    const sent: string[][] = [];
    return { sent, client: { sendCommand: async (args: string[]) => (sent.push(args), args[0] === 'EVAL' ? 1 : 'OK') } };
  };

  it('sends a TTL past 100 years as 100 years, and refuses one that is not > 0', async () => {
    const { sent, client } = recording();
    const store = new RedisDedupStore(client);
    const hundredYears = String(100 * 365 * 86_400_000);
    await store.claim('k', Infinity);
    await store.claim('k', 2 ** 40);
    await store.claimAll([
      { key: 'a', ttlSeconds: 1e300 },
      { key: 'b', ttlSeconds: 1.5 },
    ]);
    expect(sent.map((args) => args.slice(-2))).toEqual([
      ['PX', hundredYears],
      ['PX', hundredYears],
      [hundredYears, '1500'],
    ]);
    for (const bad of [Number.NaN, 0, -5]) await expect(store.claim('k', bad)).rejects.toThrow(RangeError);
  });

  it('refuses a timeoutMs that setTimeout cannot wait for, at construction', () => {
    const { client } = recording();
    // Past 2^31 - 1 ms Node fires the timer after 1 ms, so every claim would have "timed out".
    for (const timeoutMs of [Infinity, 2 ** 31, 0, -1, Number.NaN]) {
      expect(() => new RedisDedupStore(client, { timeoutMs })).toThrow(/timeoutMs must be a number of milliseconds from 1 to 2147483647/);
    }
    expect(new RedisDedupStore(client, { timeoutMs: 2 ** 31 - 1 }).timeoutMs).toBe(2 ** 31 - 1);
  });

  it('a client rejecting with a value that has no string form still fails as a WebhookDedupError', async () => {
    const store = new RedisDedupStore({ sendCommand: () => Promise.reject(Object.create(null)) });
    const error = await store.claim('k', 60).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookDedupError);
    expect((error as WebhookDedupError).message).toBe('Redis SET failed: a thrown object with no string form');
  });
});

describe.skipIf(!available)('Redis failures', () => {
  const started = () => performance.now();

  it('Redis stopped mid-run: open processes, closed refuses with 503, neither hangs', async () => {
    const server = await startPrivateRedis();
    const url = `redis://127.0.0.1:${server.port}`;
    const io = new Redis(url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    const nr = createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: false } });
    nr.on('error', () => {});
    io.on('error', () => {});
    await nr.connect();
    if (io.status !== 'ready') await new Promise((resolve) => io.once('ready', resolve));
    try {
      const handler = vi.fn();
      const onError = vi.fn();
      const open = createReceiver({ secrets: SECRET, now: manualClock().now, dedup: new RedisDedupStore(io, { timeoutMs: 1000 }) })
        .on('app:budget:cap', handler)
        .onError(onError);
      const closed = createReceiver({
        secrets: SECRET,
        now: manualClock().now,
        dedup: new RedisDedupStore(nr, { timeoutMs: 1000 }),
        dedupFailure: 'closed',
      }).on('app:budget:cap', handler);
      expect((await open.receive(delivery('app:budget:cap', { patch: { rack: 'r1' } }))).outcome).toBe('processed');
      expect((await closed.receive(delivery('app:budget:cap', { patch: { rack: 'r2' } }))).outcome).toBe('processed');

      await server.stop();

      let t = started();
      expect((await open.receive(delivery('app:budget:cap', { patch: { rack: 'r3' } }))).outcome).toBe('processed');
      expect(performance.now() - t).toBeLessThan(1500);
      expect(onError.mock.calls.at(-1)![0]).toBeInstanceOf(WebhookDedupError);
      t = started();
      const error = await closed.receive(delivery('app:budget:cap', { patch: { rack: 'r4' } })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WebhookDedupError);
      expect(error).toMatchObject({ status: 503 });
      expect(performance.now() - t).toBeLessThan(1500);
      expect(handler).toHaveBeenCalledTimes(3);
    } finally {
      io.disconnect();
      await nr.disconnect().catch(() => {}); // already closed by the server's death
      await server.stop();
    }
  });

  it('a client that queues commands forever is cut off by timeoutMs', async () => {
    const server = await startPrivateRedis();
    await server.stop();
    // ioredis defaults: an offline queue and endless reconnects, so commands never settle by themselves.
    const patient = new Redis(`redis://127.0.0.1:${server.port}`, { maxRetriesPerRequest: null, lazyConnect: false });
    patient.on('error', () => {});
    try {
      const store = new RedisDedupStore(patient, { timeoutMs: 300 });
      const t = started();
      await expect(store.claim('k', 60)).rejects.toThrow(/did not answer SET within 300 ms/);
      expect(performance.now() - t).toBeLessThan(1000);
    } finally {
      patient.disconnect();
    }
  });

  it('a client pointed at a closed port fails fast in both policies', async () => {
    const io = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    io.on('error', () => {});
    const store = new RedisDedupStore(io, { timeoutMs: 500 });
    const receiver = createReceiver({ secrets: SECRET, now: manualClock().now, dedup: store, dedupFailure: 'closed' });
    await expect(receiver.receive(delivery('app:budget:cap'))).rejects.toBeInstanceOf(WebhookDedupError);
    io.disconnect();
  });
});
