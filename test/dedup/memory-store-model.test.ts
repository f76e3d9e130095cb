import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryDedupStore } from '../../src/index.js';

/**
 * The store's contract written the slow, obvious way: a ring of `maxEntries` slots in claim order,
 * every question answered by scanning it. The real store's Map index and its one-lookup-per-key
 * claimAll must never disagree with it.
 */
class ModelStore {
  private readonly slots: ({ key: string; expiresAt: number } | undefined)[];
  private next = 0;
  constructor(readonly maxEntries: number) {
    this.slots = new Array(maxEntries).fill(undefined);
  }
  private find(key: string) {
    return this.slots.findIndex((slot) => slot?.key === key);
  }
  private held(key: string, now: number) {
    const index = this.find(key);
    return index !== -1 && this.slots[index]!.expiresAt > now;
  }
  private hold(key: string, ttl: number, now: number) {
    if (this.held(key, now)) return;
    const old = this.find(key);
    if (old !== -1) this.slots[old] = undefined;
    if (this.next === this.maxEntries) this.next = 0;
    this.slots[this.next++] = { key, expiresAt: Math.ceil(now + Math.max(1, ttl)) };
  }
  claimAll(keys: readonly { key: string; ttlSeconds: number }[], now: number): boolean {
    if (keys.some(({ key }) => this.held(key, now))) return false;
    for (const { key, ttlSeconds } of keys) this.hold(key, ttlSeconds, now);
    return true;
  }
  release(key: string) {
    const index = this.find(key);
    if (index !== -1) this.slots[index] = undefined;
  }
  get size() {
    return this.slots.filter(Boolean).length;
  }
}

const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g');
const claim = fc.record({ key, ttlSeconds: fc.integer({ min: 1, max: 4 }) });
const operation = fc.oneof(
  fc.record({ kind: fc.constant('claim' as const), claims: fc.array(claim, { minLength: 1, maxLength: 1 }) }),
  fc.record({ kind: fc.constant('claimAll' as const), claims: fc.array(claim, { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('release' as const), key }),
  fc.record({ kind: fc.constant('wait' as const), milliseconds: fc.integer({ min: 0, max: 3000 }) }),
);

describe('MemoryDedupStore against a model', () => {
  it('answers every claim, claimAll and release as the scanning model does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.array(operation, { maxLength: 80 }), async (maxEntries, operations) => {
        let clock = 5_000_000;
        const store = new MemoryDedupStore({ maxEntries, now: () => clock });
        const model = new ModelStore(maxEntries);
        for (const op of operations) {
          const now = (clock - 5_000_000) / 1000;
          if (op.kind === 'wait') clock += op.milliseconds;
          else if (op.kind === 'release') {
            await store.release(op.key);
            model.release(op.key);
          } else if (op.kind === 'claim') {
            expect(await store.claim(op.claims[0]!.key, op.claims[0]!.ttlSeconds)).toBe(model.claimAll(op.claims, now));
          } else {
            const expected = model.claimAll(op.claims, now);
            // Both entry points: the promise one users call and the receiver's synchronous one.
            const actual = op.claims.length % 2 === 0 ? await store.claimAll(op.claims) : store.claimAllSync(op.claims);
            expect(actual).toBe(expected);
          }
          expect(store.size).toBe(model.size);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('re-claims an expired key whose old slot the same claimAll just reused for its other key', async () => {
    let clock = 0;
    const store = new MemoryDedupStore({ maxEntries: 2, now: () => clock });
    await store.claim('old', 1); // slot 0, the oldest
    await store.claim('other', 60); // slot 1: the ring is full
    clock += 1000; // 'old' has expired
    // 'fresh' takes slot 0 (evicting 'old'); 'old' then goes to slot 1.
    expect(
      store.claimAllSync([
        { key: 'fresh', ttlSeconds: 60 },
        { key: 'old', ttlSeconds: 60 },
      ]),
    ).toBe(true);
    expect(await store.claim('fresh', 60)).toBe(false);
    expect(await store.claim('old', 60)).toBe(false);
    await store.claim('next', 60); // overwrites slot 0: 'fresh' must leave the index with it
    expect(store.size).toBe(2);
    expect(await store.claim('fresh', 60)).toBe(true);
  });
});
