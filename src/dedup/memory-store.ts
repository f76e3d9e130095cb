import type { DedupClaim, DedupStore } from './store.js';

export interface MemoryDedupStoreOptions {
  /** At most this many keys are held; the oldest goes first when full. Default 100,000. */
  maxEntries?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

/**
 * The embedded store for one process: a Map in insertion order, so the oldest key is always at
 * the front. Expiry is checked on read and swept from the front on write: O(1) per claim and no
 * timer per key. Expiry times are kept as seconds since the store was made, which V8 stores
 * inline (a small integer) rather than as a boxed number.
 */
export class MemoryDedupStore implements DedupStore {
  readonly maxEntries: number;
  readonly #entries = new Map<string, number>();
  readonly #now: () => number;
  readonly #origin: number;

  constructor(options: MemoryDedupStoreOptions = {}) {
    const maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`maxEntries must be a whole number >= 1, got ${String(maxEntries)}`);
    }
    this.maxEntries = maxEntries;
    this.#now = options.now ?? Date.now;
    this.#origin = this.#now();
  }

  /** Keys held, expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size;
  }

  /** Exact seconds since the store was made; expiry times are whole seconds rounded up. */
  #seconds(): number {
    return (this.#now() - this.#origin) / 1000;
  }

  #isHeld(key: string, now: number): boolean {
    const expiresAt = this.#entries.get(key);
    return expiresAt !== undefined && expiresAt > now;
  }

  #hold(key: string, ttlSeconds: number, now: number): void {
    // Deleting first moves a re-claimed (expired) key to the back, keeping the Map in age order.
    this.#entries.delete(key);
    // Rounded up, never down: a replay key must outlive the window it guards.
    this.#entries.set(key, Math.ceil(now + Math.max(1, ttlSeconds)));
    this.#sweep(now);
  }

  /** Drops expired keys at the front (a bounded amount of work), then the oldest while over the bound. */
  #sweep(now: number): void {
    let budget = 2;
    for (const [key, expiresAt] of this.#entries) {
      if (this.#entries.size > this.maxEntries || (expiresAt <= now && budget-- > 0)) {
        this.#entries.delete(key);
      } else {
        break;
      }
    }
  }

  claim(key: string, ttlSeconds: number): Promise<boolean> {
    const now = this.#seconds();
    if (this.#isHeld(key, now)) return Promise.resolve(false);
    this.#hold(key, ttlSeconds, now);
    return Promise.resolve(true);
  }

  claimAll(claims: readonly DedupClaim[]): Promise<boolean> {
    const now = this.#seconds();
    if (claims.some(({ key }) => this.#isHeld(key, now))) return Promise.resolve(false);
    for (const { key, ttlSeconds } of claims) this.#hold(key, ttlSeconds, now);
    return Promise.resolve(true);
  }

  release(key: string): Promise<void> {
    this.#entries.delete(key);
    return Promise.resolve();
  }

  clear(): void {
    this.#entries.clear();
  }
}
