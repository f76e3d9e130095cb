import type { Row } from '../database/driver.js';
import { systemClock, type Clock, type LoopState } from './loop.js';
import type { Completion, Recording } from './run-batched.js';
import type { Claimed } from './run-delivery.js';

/** What the batched loop asks of the database and the receiver; each step handles (logs) its own errors. */
export interface BatchSteps {
  /** Claims up to `wanted` due rows, an attempt recorded for each; undefined when the database failed. */
  claim(wanted: number): Promise<Row[] | undefined>;
  toClaimed(row: Row): Claimed;
  /** Runs one delivery's handlers; never rejects. */
  run(claimed: Claimed): Promise<Completion>;
  /** One statement for many outcomes; resolves with the ids recorded, undefined when the database failed. */
  complete(completions: readonly Completion[]): Promise<ReadonlySet<string> | undefined>;
  /** Gives back claimed rows whose handlers never started. */
  release(claimed: readonly Claimed[]): Promise<void>;
  /** Extends the lease of these rows; false when the database failed. */
  renew(ids: readonly string[]): Promise<boolean>;
  recover(): Promise<void>;
  beforePoll(): void;
}

export interface BatchSettings {
  readonly concurrency: number;
  readonly batchSize: number;
  readonly pollIntervalMs: number;
  readonly leaseSeconds: number;
}

interface Held {
  readonly claimed: Claimed;
  /** When its lease runs out by the loop's clock (Clock.now()), as last claimed or renewed. */
  leaseEndsAt: number;
}

const RETRY_SLACK_MS = 5;

/**
 * `mode: 'batched'`: claims run ahead of the handlers into a local queue (up to `batchSize` rows,
 * refilled when half of it is gone), handlers run `concurrency` at a time and hold no connection,
 * and their outcomes are recorded by one statement per flush (a flush takes everything finished
 * while the one before was under way). Leases of held rows are renewed every third of a lease; a
 * queued row whose lease is more than half gone is given back, never started.
 * Same surface as `WorkerLoop`, so `worker.ts` drives either.
 */
export class BatchLoop {
  #state: LoopState = 'running';
  readonly #queue: Held[] = [];
  /** Claimed and not yet finished (queued or running), by id: what renewals extend. */
  readonly #held = new Map<string, Held>();
  readonly #slots = new Set<Promise<void>>();
  #finished: Completion[] = [];
  #flushing: Promise<void> | undefined;
  readonly #timers = new Set<() => void>();
  #claiming: Promise<void> | undefined;
  #claimAgain = false;
  #polling: Promise<void> | undefined;
  #idleWaiters: (() => void)[] = [];
  readonly #leaseMs: number;

  constructor(
    private readonly steps: BatchSteps,
    private readonly settings: BatchSettings,
    private readonly clock: Clock = systemClock,
  ) {
    this.#leaseMs = settings.leaseSeconds * 1000;
  }

  get state(): LoopState {
    return this.#state;
  }

  /** Deliveries claimed by this worker and not yet recorded (queued, running, or awaiting their completion statement). */
  get running(): number {
    return this.#queue.length + this.#slots.size + this.#finished.length + (this.#flushing ? 1 : 0);
  }

  start(): void {
    this.#poll();
    this.#renewLater();
  }

  wake(): Promise<void> {
    if (this.#state !== 'running') return Promise.resolve();
    if (this.#claiming !== undefined) {
      this.#claimAgain = true;
      return this.#claiming;
    }
    const pass = this.#claimWhileLow().finally(() => {
      this.#claiming = undefined;
      if (this.#claimAgain) {
        this.#claimAgain = false;
        void this.wake();
      } else this.#settleIdle();
    });
    this.#claiming = pass;
    return pass;
  }

  whenIdle(): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Claims no more, gives the queue back, lets running handlers finish and records their outcomes. */
  async stop(): Promise<void> {
    if (this.#state === 'running') {
      this.#state = 'stopping';
      for (const cancel of this.#timers) cancel();
      this.#timers.clear();
    }
    await Promise.allSettled([this.#claiming, this.#polling]);
    await this.#releaseQueue();
    await Promise.allSettled([...this.#slots]);
    while (this.#flushing !== undefined) await this.#flushing;
    this.#state = 'stopped';
    this.#settleIdle();
  }

  /** Refills the queue once half of it is gone, so that the handlers never wait for a claim. */
  async #claimWhileLow(): Promise<void> {
    const { batchSize } = this.settings;
    while (this.#state === 'running' && this.#queue.length <= batchSize / 2) {
      const wanted = batchSize - this.#queue.length;
      const claimedAt = this.clock.now();
      const rows = await this.steps.claim(wanted);
      if (rows === undefined) {
        this.#claimAgain = false; // the database failed: the poll tries again, not a hot loop
        return;
      }
      const fresh = rows.map((row) => ({ claimed: this.steps.toClaimed(row), leaseEndsAt: claimedAt + this.#leaseMs }));
      if (this.#state !== 'running') {
        await this.steps.release(fresh.map((held) => held.claimed)); // stop() came while claiming
        return;
      }
      for (const held of fresh) {
        this.#queue.push(held);
        this.#held.set(held.claimed.id, held);
      }
      this.#pump();
      if (rows.length < wanted) return;
    }
  }

  /** Starts queued deliveries while a slot is free; a queued row whose lease is half gone goes back. */
  #pump(): void {
    const stale: Held[] = [];
    while (this.#state === 'running' && this.#slots.size < this.settings.concurrency && this.#queue.length > 0) {
      const held = this.#queue.shift()!;
      if (held.leaseEndsAt - this.clock.now() < this.#leaseMs / 2) stale.push(held);
      else this.#startSlot(held);
    }
    if (stale.length > 0) {
      for (const held of stale) this.#held.delete(held.claimed.id);
      void this.steps.release(stale.map((held) => held.claimed));
    }
  }

  #startSlot(held: Held): void {
    const slot: Promise<void> = this.steps
      .run(held.claimed)
      .then((completion) => {
        this.#finished.push(completion);
        this.#flush();
      })
      .finally(() => {
        this.#held.delete(held.claimed.id);
        this.#slots.delete(slot);
        this.#pump();
        if (this.#queue.length <= this.settings.batchSize / 2) void this.wake();
        this.#settleIdle();
      });
    this.#slots.add(slot);
  }

  /** One completion statement at a time; what finishes meanwhile goes with the next. */
  #flush(): void {
    if (this.#flushing !== undefined || this.#finished.length === 0) return;
    const batch = this.#finished;
    this.#finished = [];
    this.#flushing = this.steps
      .complete(batch)
      .then(async (recorded) => {
        const recordingOf = (id: string): Recording => (recorded === undefined ? 'unrecorded' : recorded.has(id) ? 'recorded' : 'lost');
        await Promise.allSettled(batch.map((completion) => completion.settle(recordingOf(completion.claimed.id))));
        for (const completion of batch)
          if (completion.state === 'pending' && recorded?.has(completion.claimed.id))
            this.#after(completion.delayMs + RETRY_SLACK_MS, () => void this.wake());
      })
      .finally(() => {
        this.#flushing = undefined;
        this.#flush();
        this.#settleIdle();
      });
  }

  async #releaseQueue(): Promise<void> {
    const queued = this.#queue.splice(0);
    for (const held of queued) this.#held.delete(held.claimed.id);
    if (queued.length > 0) await this.steps.release(queued.map((held) => held.claimed));
  }

  /** Every third of a lease, one statement extends the lease of every row this worker holds. */
  #renewLater(): void {
    this.#after(
      this.#leaseMs / 3,
      () => {
        const held = [...this.#held.values()];
        const startedAt = this.clock.now();
        const renewing = held.length === 0 ? Promise.resolve(false) : this.steps.renew(held.map((h) => h.claimed.id));
        void renewing.then((renewed) => {
          if (renewed) for (const h of held) h.leaseEndsAt = startedAt + this.#leaseMs;
          this.#renewLater();
        });
      },
      false,
    );
  }

  #poll(): void {
    if (this.#state !== 'running') return;
    this.steps.beforePoll();
    this.#polling = this.steps
      .recover()
      .then(() => this.wake())
      .finally(() => {
        this.#polling = undefined;
        this.#after(this.settings.pollIntervalMs, () => this.#poll(), true);
      });
  }

  #after(ms: number, fn: () => void, keepAlive = false): void {
    if (this.#state !== 'running') return;
    const cancel = this.clock.after(
      ms,
      () => {
        this.#timers.delete(cancel);
        fn();
      },
      keepAlive,
    );
    this.#timers.add(cancel);
  }

  #idle(): boolean {
    return this.running === 0 && this.#claiming === undefined;
  }

  #settleIdle(): void {
    if (this.#idle()) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }
}
