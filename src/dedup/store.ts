/** One key to hold for `ttlSeconds`. */
export interface DedupClaim {
  /** The key: `body:<sha256 of the body>` or `event:<action>:<tick_id>:<sha256 of the content>` from the receiver. */
  readonly key: string;
  /** How long to hold it, in seconds > 0; `Infinity` holds it as long as the store can. */
  readonly ttlSeconds: number;
}

/**
 * Where claims on delivery keys live. `claim` is an atomic set-if-absent: it resolves true when
 * this caller now holds the key, false when someone already does. `release` gives a key back.
 * A store may also claim several keys atomically (`claimAll`: all or none), which the receiver
 * uses when present; otherwise it claims one by one and gives back what it got.
 */
export interface DedupStore {
  /** Holds `key` for `ttlSeconds` if nobody holds it: true when this caller now holds it, false when someone already did. */
  claim(key: string, ttlSeconds: number): Promise<boolean>;
  /** Gives a key back (a handler failed, so a copy of the delivery may still be processed). */
  release(key: string): Promise<void>;
  /** Claims every key or none, atomically: true when all are now held by this caller. */
  claimAll?(claims: readonly DedupClaim[]): Promise<boolean>;
  /** The same, answered synchronously, for a store that holds its keys in this process. */
  claimAllSync?(claims: readonly DedupClaim[]): boolean;
}

/** Claims every key or none, with one atomic call when the store offers it. */
export function claimAll(store: DedupStore, claims: readonly DedupClaim[]): Promise<boolean> {
  if (store.claimAll !== undefined) return store.claimAll(claims);
  return claimOneByOne(store, claims);
}

async function claimOneByOne(store: DedupStore, claims: readonly DedupClaim[]): Promise<boolean> {
  const held: string[] = [];
  try {
    for (const { key, ttlSeconds } of claims) {
      if (!(await store.claim(key, ttlSeconds))) {
        await Promise.all(held.map((key) => store.release(key)));
        return false;
      }
      held.push(key);
    }
  } catch (error) {
    await Promise.allSettled(held.map((key) => store.release(key)));
    throw error;
  }
  return true;
}

/**
 * A claim's TTL as a store can hold it: a number of seconds > 0. `Infinity` and anything past what
 * a store can represent are held "for ever" by the store's own cap, never wrapped into a TTL that
 * has already run out. Exposed to the stores, not the package.
 */
export function assertTtlSeconds(ttlSeconds: number): void {
  if (typeof ttlSeconds !== 'number' || !(ttlSeconds > 0)) {
    throw new RangeError(`ttlSeconds must be a number of seconds > 0, got ${String(ttlSeconds)}`);
  }
}
