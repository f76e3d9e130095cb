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
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * The deliveries of one inbox waiting for its database, as one queue rather than one backoff loop
 * each: N loops would each take a pool connection, or open one, at every step, and all land on the
 * database the moment it answers. While the database is down, one waiting delivery at a time tries
 * (the probe), after a backoff that grows with each failed probe; the others wait for its result.
 * When an attempt reaches the database, the waiting deliveries go in arrival order, at most `width`
 * at a time (a few per pool connection): all at once would only queue in the pool, where pg gives
 * up on a checkout after its `connectionTimeoutMillis` (measured: 1,466 checkouts queued behind a
 * pool of 10 after a 5 s stop at 300 requests/s).
 */
export class Circuit {
  readonly #width: number;
  readonly #queue = new Set<Waiter>();
  #down = false;
  #failedProbes = 0;
  #probeTimer: ReturnType<typeof setTimeout> | undefined;
  #probing = false;
  /** Attempts of waiting deliveries under way. */
  #running = 0;

  constructor(width: number) {
    this.#width = Math.max(1, width);
  }

  /** An outage is under way: a new delivery waits its turn rather than try on its own. */
  get down(): boolean {
    return this.#down;
  }

  /** Any attempt that reached the database (stored, or refused for good). */
  reached(): void {
    this.#down = false;
    this.#failedProbes = 0;
    if (this.#probeTimer !== undefined) clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
    this.#pump();
  }

  /** Any attempt that failed for a reason that can pass. */
  unreachable(): void {
    this.#down = true;
    this.#pump();
  }

  /** Resolves when this waiting delivery may try again, or with 'expired' at `deadline` (ms since the epoch). */
  wait(deadline: number): Promise<Turn> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(
          () => {
            this.#queue.delete(waiter);
            resolve('expired');
          },
          Math.max(0, deadline - Date.now()),
        ),
      };
      this.#queue.add(waiter);
      this.#pump();
    });
  }

  /** A waiting delivery's attempt is over; report its outcome with `reached` or `unreachable` first. */
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
    clearTimeout(waiter.timer);
    this.#running++;
    waiter.resolve(turn);
  }

  #pump(): void {
    if (!this.#down) {
      while (this.#running < this.#width && this.#queue.size > 0) this.#take('go');
      return;
    }
    if (this.#probing || this.#probeTimer !== undefined || this.#queue.size === 0) return;
    this.#probeTimer = setTimeout(
      () => {
        this.#probeTimer = undefined;
        if (!this.#down || this.#probing) return this.#pump();
        if (this.#queue.size === 0) return;
        this.#probing = true;
        this.#take('probe');
      },
      retryDelayMs(this.#failedProbes + 1),
    );
  }
}
