import type { Clock } from '../../clock.js';

/** Waits between probes: 50 ms doubling to 1 s, each between half and all of its step. */
const FIRST_STEP_MS = 50;
const LONGEST_STEP_MS = 1000;

export function retryDelayMs(failedAttempts: number, random: () => number = Math.random): number {
  const step = Math.min(LONGEST_STEP_MS, FIRST_STEP_MS * 2 ** Math.min(10, Math.max(0, failedAttempts - 1)));
  return Math.round(step * (0.5 + 0.5 * random()));
}

/** What a waiting delivery is let go to do: try as the one probe, try with the others, or give up (its deadline passed). */
export type Turn = 'probe' | 'go' | 'expired';

interface Waiter {
  readonly resolve: (turn: Turn) => void;
  /** Told when an outage becomes known while it waits, with its cause. */
  readonly onDown: ((cause: string) => void) | undefined;
}

/**
 * The store attempts of one inbox, as one queue: a gate no wider than the pool, and while the
 * database is away, one attempt at a time. Every delivery takes a turn here, its first attempt
 * too: against a server that accepts connections and never answers, nothing fails, and 3,000
 * deliveries arriving at once made 3,011 pool checkouts; through the gate at most `width` attempts
 * are under way, the others wait their turn within their bound. While the database is down, one
 * waiting delivery at a time tries (the probe), after a backoff that grows with each failed probe;
 * the others wait for its result. When an attempt reaches the database, the waiting deliveries go
 * in arrival order, `width` at a time. An attempt keeps its turn until it settles, even when its
 * delivery was answered 503 meanwhile: it still holds a connection, or a place in the pool's queue.
 */
export class Circuit {
  readonly #width: number;
  readonly #queue = new Set<Waiter>();
  #down = false;
  #failedProbes = 0;
  readonly #clock: Clock;
  #cancelProbe: (() => void) | undefined;
  #probing = false;
  /** Attempts under way, never more than the width: an attempt keeps its turn until it settles. */
  #running = 0;

  constructor(width: number, clock: Clock) {
    this.#width = Math.max(1, width);
    this.#clock = clock;
  }

  /** An outage is under way: a new delivery waits its turn rather than try on its own. */
  get down(): boolean {
    return this.#down;
  }

  /** Any attempt that reached the database (stored, or refused for good). */
  reached(): void {
    this.#down = false;
    this.#failedProbes = 0;
    this.#cancelProbe?.();
    this.#cancelProbe = undefined;
    this.#pump();
  }

  /** Any attempt that failed for a reason that can pass (`cause`): the deliveries waiting are told, once per outage. */
  unreachable(cause: string): void {
    if (!this.#down) for (const waiter of this.#queue) waiter.onDown?.(cause);
    this.#down = true;
    this.#pump();
  }

  /** Resolves when this delivery may try, or with 'expired' once `expired` resolves (its bound passed). */
  wait(expired: Promise<unknown>, onDown?: (cause: string) => void): Promise<Turn> {
    return new Promise((resolve) => {
      const waiter: Waiter = { resolve, onDown };
      this.#queue.add(waiter);
      void expired.then(() => {
        if (this.#queue.delete(waiter)) resolve('expired');
      });
      this.#pump();
    });
  }

  /** A delivery's attempt settled (even after its delivery was answered); report its outcome with `reached` or `unreachable` first. */
  done(turn: Turn): void {
    this.#running--;
    if (turn === 'probe') {
      this.#probing = false;
      if (this.#down) this.#failedProbes++;
    }
    this.#pump();
  }

  #take(turn: Turn): void {
    const waiter = this.#queue.values().next().value!;
    this.#queue.delete(waiter);
    this.#running++;
    waiter.resolve(turn);
  }

  #pump(): void {
    if (!this.#down) {
      while (this.#running < this.#width && this.#queue.size > 0) this.#take('go');
      return;
    }
    // Attempts stuck past their deliveries' bounds keep their turns: a probe waits for a free one too.
    if (this.#probing || this.#cancelProbe !== undefined || this.#queue.size === 0 || this.#running >= this.#width) return;
    this.#cancelProbe = this.#clock.after(
      retryDelayMs(this.#failedProbes + 1),
      () => {
        this.#cancelProbe = undefined;
        if (!this.#down || this.#probing || this.#running >= this.#width) return this.#pump();
        if (this.#queue.size === 0) return;
        this.#probing = true;
        this.#take('probe');
      },
      false, // the deliveries waiting for it hold the process open with their own bounds
    );
  }
}
