import { assertTtlSeconds, type DedupClaim, type DedupStore } from './store.js';

/** Options of {@link MemoryDedupStore}. */
export interface MemoryDedupStoreOptions {
  /**
   * At most this many keys are held, from 1 to 2^30; the oldest goes first when full. About 220
   * bytes per held key.
   *
   * @defaultValue `100000`
   */
  maxEntries?: number;
  /**
   * Clock in milliseconds, for tests.
   *
   * @defaultValue `Date.now`
   */
  now?: () => number;
}

const INITIAL_SLOTS = 1024;
/** Expiries are whole seconds since the store was made, in an Int32Array: about 68 years at most. */
const MAX_EXPIRY = 2 ** 31 - 1;
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
  /** The most keys held at once. */
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

  /** The key's slot while its claim is live; -1 when absent; -2 - slot when it has expired. */
  #lookup(key: string, now: number): number {
    const slot = this.#slotOf.get(key);
    if (slot === undefined) return -1;
    return this.#expiries[slot]! > now ? slot : -2 - slot;
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

  /** `found` is what #lookup said: an expired claim's old slot is cleared, not looked up again. */
  #hold(key: string, ttlSeconds: number, now: number, found: number): void {
    if (found >= 0) return; // held already: the same key twice in one claimAll
    if (found <= -2) {
      // An expired claim, re-claimed; unless holding an earlier key of this call reused its slot.
      const expiredSlot = -2 - found;
      if (this.#keys[expiredSlot] === key) this.#keys[expiredSlot] = undefined;
    }
    if (this.#next === this.#keys.length) {
      if (this.#keys.length < this.maxEntries) this.#grow();
      else this.#next = 0;
    }
    const slot = this.#next++;
    const evicted = this.#keys[slot];
    if (evicted !== undefined) this.#slotOf.delete(evicted);
    this.#keys[slot] = key;
    // Rounded up, never down: a replay key must outlive the window it guards. Capped, not wrapped:
    // a TTL past the Int32 range would otherwise store an expiry that has already passed.
    this.#expiries[slot] = Math.min(MAX_EXPIRY, Math.ceil(now + Math.max(1, ttlSeconds)));
    this.#slotOf.set(key, slot);
  }

  /** Holds `key` for `ttlSeconds` unless it is held: true when this call now holds it. Settles in the calling tick. */
  claim(key: string, ttlSeconds: number): Promise<boolean> {
    assertTtlSeconds(ttlSeconds);
    const now = this.#seconds();
    const found = this.#lookup(key, now);
    if (found >= 0) return ALREADY_HELD;
    this.#hold(key, ttlSeconds, now, found);
    return CLAIMED;
  }

  /** Holds every key or none: true when this call now holds them all. */
  claimAll(claims: readonly DedupClaim[]): Promise<boolean> {
    return this.claimAllSync(claims) ? CLAIMED : ALREADY_HELD;
  }

  /** `claimAll` answered in the calling tick: a delivery need not wait a microtask turn for it. */
  claimAllSync(claims: readonly DedupClaim[]): boolean {
    for (let i = 0; i < claims.length; i++) assertTtlSeconds(claims[i]!.ttlSeconds);
    const now = this.#seconds();
    if (claims.length === 2 && claims[0]!.key !== claims[1]!.key) {
      // The receiver's case: two distinct keys, each looked up once.
      const first = this.#lookup(claims[0]!.key, now);
      if (first >= 0) return false;
      const second = this.#lookup(claims[1]!.key, now);
      if (second >= 0) return false;
      this.#hold(claims[0]!.key, claims[0]!.ttlSeconds, now, first);
      this.#hold(claims[1]!.key, claims[1]!.ttlSeconds, now, second);
      return true;
    }
    for (let i = 0; i < claims.length; i++) if (this.#lookup(claims[i]!.key, now) >= 0) return false;
    for (let i = 0; i < claims.length; i++) this.#hold(claims[i]!.key, claims[i]!.ttlSeconds, now, this.#lookup(claims[i]!.key, now));
    return true;
  }

  /** Gives a key back; a key not held is ignored. */
  release(key: string): Promise<void> {
    const slot = this.#slotOf.get(key);
    if (slot !== undefined) {
      this.#slotOf.delete(key);
      this.#keys[slot] = undefined;
    }
    return DONE;
  }

  /** Forgets every key. */
  clear(): void {
    this.#slotOf.clear();
    this.#keys.fill(undefined);
    this.#next = 0;
  }
}
