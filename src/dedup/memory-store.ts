import type { DedupClaim, DedupStore } from './store.js';

export interface MemoryDedupStoreOptions {
  /** At most this many keys are held; the oldest goes first when full. Default 100,000. */
  maxEntries?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

const INITIAL_SLOTS = 1024;
// A settled promise can be handed out any number of times; allocating one per claim is waste.
const CLAIMED = Promise.resolve(true);
const ALREADY_HELD = Promise.resolve(false);
const DONE = Promise.resolve();

/**
 * The embedded store for one process. It remembers the most recent `maxEntries` claims (fewer
 * when some were released or have expired). Keys live in a ring of slots in claim order; a Map points
 * from key to slot, and the expiry of each slot sits in an Int32Array (seconds since the store was
 * made, rounded up). A claim is a Map lookup and, when the ring is full, overwriting the oldest
 * slot: O(1), no timer per key, no scan. (Iterating a Map from its front to evict is not O(1) in
 * V8: deleted entries stay behind as holes that every new iterator walks past.)
 */
export class MemoryDedupStore implements DedupStore {
  readonly maxEntries: number;
  readonly #slotOf = new Map<string, number>();
  #keys: (string | undefined)[];
  #expiries: Int32Array;
  /** Next slot to write; the slot it points at is the oldest once the ring has wrapped. */
  #next = 0;
  readonly #now: () => number;
  readonly #origin: number;

  constructor(options: MemoryDedupStoreOptions = {}) {
    const maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1 || maxEntries > 2 ** 30) {
      throw new RangeError(`maxEntries must be a whole number from 1 to 2^30, got ${String(maxEntries)}`);
    }
    this.maxEntries = maxEntries;
    const slots = Math.min(maxEntries, INITIAL_SLOTS);
    this.#keys = new Array<string | undefined>(slots).fill(undefined);
    this.#expiries = new Int32Array(slots);
    this.#now = options.now ?? Date.now;
    this.#origin = this.#now();
  }

  /** Keys in the store, including expired ones not yet overwritten. */
  get size(): number {
    return this.#slotOf.size;
  }

  /** Exact seconds since the store was made. */
  #seconds(): number {
    return (this.#now() - this.#origin) / 1000;
  }

  #isHeld(key: string, now: number): boolean {
    const slot = this.#slotOf.get(key);
    return slot !== undefined && this.#expiries[slot]! > now;
  }

  /** Grows the ring by doubling until it reaches maxEntries; only before it first wraps. */
  #grow(): void {
    const slots = Math.min(this.maxEntries, this.#keys.length * 2);
    const expiries = new Int32Array(slots);
    expiries.set(this.#expiries);
    this.#expiries = expiries;
    this.#keys.length = slots;
    this.#keys.fill(undefined, this.#next);
  }

  #hold(key: string, ttlSeconds: number, now: number): void {
    const previous = this.#slotOf.get(key);
    if (previous !== undefined) this.#keys[previous] = undefined; // an expired claim, re-claimed
    if (this.#next === this.#keys.length) {
      if (this.#keys.length < this.maxEntries) this.#grow();
      else this.#next = 0;
    }
    const slot = this.#next++;
    const evicted = this.#keys[slot];
    if (evicted !== undefined) this.#slotOf.delete(evicted);
    this.#keys[slot] = key;
    // Rounded up, never down: a replay key must outlive the window it guards.
    this.#expiries[slot] = Math.ceil(now + Math.max(1, ttlSeconds));
    this.#slotOf.set(key, slot);
  }

  claim(key: string, ttlSeconds: number): Promise<boolean> {
    const now = this.#seconds();
    if (this.#isHeld(key, now)) return ALREADY_HELD;
    this.#hold(key, ttlSeconds, now);
    return CLAIMED;
  }

  claimAll(claims: readonly DedupClaim[]): Promise<boolean> {
    const now = this.#seconds();
    for (const { key } of claims) if (this.#isHeld(key, now)) return ALREADY_HELD;
    for (const { key, ttlSeconds } of claims) this.#hold(key, ttlSeconds, now);
    return CLAIMED;
  }

  release(key: string): Promise<void> {
    const slot = this.#slotOf.get(key);
    if (slot !== undefined) {
      this.#slotOf.delete(key);
      this.#keys[slot] = undefined;
    }
    return DONE;
  }

  clear(): void {
    this.#slotOf.clear();
    this.#keys.fill(undefined);
    this.#next = 0;
  }
}
