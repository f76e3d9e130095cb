import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryDedupStore } from '../../src/index.js';
import { claimAll } from '../../src/dedup/store.js';

describe('MemoryDedupStore', () => {
  it('processes exactly one claim per distinct key under any interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), fc.scheduler(), async (keys, scheduler) => {
        const store = new MemoryDedupStore();
        const results = keys.map((key) => scheduler.schedule(Promise.resolve(key)).then((k) => store.claim(`k${k}`, 60)));
        await scheduler.waitAll();
        const won = (await Promise.all(results)).filter(Boolean).length;
        expect(won).toBe(new Set(keys).size);
      }),
    );
  });

  it('claims pairs all-or-nothing: a delivery is a duplicate when either key is held', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 8 })), { maxLength: 60 }),
        async (pairs) => {
          const store = new MemoryDedupStore();
          const held = new Set<string>();
          for (const [replay, event] of pairs) {
            const keys = [`r${replay}`, `e${event}`];
            const expected = !keys.some((k) => held.has(k));
            expect(
              await claimAll(
                store,
                keys.map((key) => ({ key, ttlSeconds: 60 })),
              ),
            ).toBe(expected);
            if (expected) keys.forEach((k) => held.add(k));
          }
          expect(store.size).toBe(held.size);
        },
      ),
    );
  });

  it('never holds more than maxEntries under a flood of distinct keys, and evicts the oldest first', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 500 }), async (maxEntries, flood) => {
        const store = new MemoryDedupStore({ maxEntries });
        for (let i = 0; i < flood; i++) {
          expect(await store.claim(`k${i}`, 3600)).toBe(true);
          expect(store.size).toBeLessThanOrEqual(maxEntries);
        }
        if (flood > maxEntries) {
          expect(await store.claim(`k${flood - 1}`, 3600)).toBe(false); // newest still held
          expect(await store.claim('k0', 3600)).toBe(true); // oldest was evicted
        }
      }),
    );
  });

  it('does not count expired entries: an expired key can be claimed again', async () => {
    let now = 1_000_000;
    const store = new MemoryDedupStore({ now: () => now });
    expect(await store.claim('a', 10)).toBe(true);
    now += 9_999;
    expect(await store.claim('a', 10)).toBe(false);
    now += 1;
    expect(await store.claim('a', 10)).toBe(true);
  });

  it('never frees a key early, whatever the sub-second phase of the clock', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 999 }),
        fc.integer({ min: 1, max: 600 }),
        async (origin, phase, ttl) => {
          let now = origin;
          const store = new MemoryDedupStore({ now: () => now });
          now += phase;
          await store.claim('k', ttl);
          now += ttl * 1000 - 1;
          expect(await store.claim('k', ttl)).toBe(false);
        },
      ),
    );
  });

  it('grows its ring past the initial size and keeps order when it wraps', async () => {
    const store = new MemoryDedupStore({ maxEntries: 3000 });
    for (let i = 0; i < 7000; i++) await store.claim(`k${i}`, 3600);
    expect(store.size).toBe(3000);
    expect(await store.claim('k3999', 3600)).toBe(true); // long evicted
    expect(await store.claim('k4000', 3600)).toBe(true); // the oldest held key, evicted by k3999
    expect(await store.claim('k4002', 3600)).toBe(false);
    expect(await store.claim('k6999', 3600)).toBe(false);
  });

  it('a re-claimed expired key and a released key leave no stale slot behind', async () => {
    let now = 0;
    const store = new MemoryDedupStore({ maxEntries: 2, now: () => now });
    await store.claim('a', 1);
    now += 2000;
    expect(await store.claim('a', 60)).toBe(true); // expired, claimed again in a new slot
    await store.claim('b', 60); // overwrites a's old slot, which must not evict the new 'a'
    expect(await store.claim('a', 60)).toBe(false);
    await store.release('b');
    expect(store.size).toBe(1);
    expect(await store.claim('b', 60)).toBe(true); // released, so claimable again
    expect(store.size).toBeLessThanOrEqual(2);
  });

  it('holds a TTL past its Int32 range, or Infinity, as long as it can: never as already expired', async () => {
    for (const ttl of [2 ** 31, 3e9, Number.MAX_SAFE_INTEGER, Infinity]) {
      const store = new MemoryDedupStore();
      expect(await store.claim('k', ttl)).toBe(true);
      expect(await store.claim('k', ttl)).toBe(false);
      expect(
        await store.claimAll([
          { key: 'a', ttlSeconds: ttl },
          { key: 'b', ttlSeconds: 60 },
        ]),
      ).toBe(true);
      expect(
        await store.claimAll([
          { key: 'a', ttlSeconds: 60 },
          { key: 'c', ttlSeconds: 60 },
        ]),
      ).toBe(false);
    }
  });

  it('refuses a TTL that is not a number of seconds > 0', () => {
    for (const bad of [Number.NaN, 0, -1, '60' as unknown as number]) {
      expect(() => new MemoryDedupStore().claim('k', bad)).toThrow(RangeError);
      expect(() => new MemoryDedupStore().claimAll([{ key: 'k', ttlSeconds: bad }])).toThrow(/ttlSeconds must be a number of seconds > 0/);
    }
  });

  it('release frees a key, and bad options are refused', async () => {
    const store = new MemoryDedupStore();
    await store.claim('a', 60);
    await store.release('a');
    expect(await store.claim('a', 60)).toBe(true);
    expect(() => new MemoryDedupStore({ maxEntries: 0 })).toThrow(RangeError);
    store.clear();
    expect(store.size).toBe(0);
    expect(await store.claim('a', 60)).toBe(true);
  });
});
