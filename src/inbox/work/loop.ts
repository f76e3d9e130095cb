import { MAX_TIMER_MS } from '../../shared/timers.js';
import type { Row } from '../database/driver.js';
import type { Outcome } from './run-delivery.js';

/** Timers and the time they count from, injectable so that a test can move both without waiting. */
export interface Clock {
  /**
   * Calls `fn` after `ms`; returns what cancels it. `keepAlive`: the timer holds the process open
   * (the poll: a worker keeps its process alive until stop(), as a listening server does).
   */
  after(ms: number, fn: () => void, keepAlive: boolean): () => void;
  /** Milliseconds on a monotonic clock (performance.now()): how long a claimed row has been held. */
  now(): number;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  after(ms, fn, keepAlive) {
    const timer = setTimeout(fn, Math.min(ms, MAX_TIMER_MS)); // a longer wait would fire after 1 ms
    if (!keepAlive) (timer as { unref?: () => void }).unref?.();
    return () => clearTimeout(timer);
  },
};

/** What the loop asks of the database; each step handles (logs) its own database errors. */
export interface LoopSteps {
  /** Claims up to `wanted` due rows; undefined when the database failed. */
  claim(wanted: number): Promise<Row[] | undefined>;
  /** Runs one claimed row and records its outcome; never rejects. */
  run(row: Row): Promise<Outcome>;
  /** Gives back a row claimed while stop() came: its handlers never started. */
  release(row: Row): Promise<void>;
  /** Rows whose worker stopped mid-attempt: pending again, or dead. */
  recover(): Promise<void>;
  /** Before each poll (re-LISTEN if the listening connection was lost). */
  beforePoll(): void;
}

export interface LoopSettings {
  readonly concurrency: number;
  /** Rows claimed per round trip, at most. */
  readonly batchSize: number;
  /**
   * Rows held claimed beyond the slots, started as slots free: a claim's round trip then overlaps
   * the handlers instead of leaving a slot idle. 0: claim only for free slots.
   */
  readonly claimAhead: number;
  readonly pollIntervalMs: number;
  /** A row held ahead this long, half its lease, is given back instead of started (another worker may soon take it). */
  readonly leaseSeconds: number;
}

/**
 * `running`: claims whenever a slot is free and woken (a notification, a finished delivery, a
 * retry coming due, the poll); `stopping`: claims nothing more, waits for the claim under way and
 * the handlers running; `stopped`: nothing under way, no timer left.
 */
export type LoopState = 'running' | 'stopping' | 'stopped';

/** A RETRY_SLACK_MS after a retry is due, look for it (its run_at is now() + delay, set a moment later). */
const RETRY_SLACK_MS = 5;

/**
 * The worker's loop: owns the slots (handlers running), the one claim pass at a time, the poll
 * and the retry timers. One claim pass runs at a time; a wake-up during it runs another after it.
 */
export class WorkerLoop {
  #state: LoopState = 'running';
  readonly #slots = new Set<Promise<void>>();
  readonly #releasing = new Set<Promise<void>>();
  #staleTimerSet = false;
  readonly #timers = new Set<() => void>();
  #claiming: Promise<void> | undefined;
  #claimAgain = false;
  #polling: Promise<void> | undefined;
  #idleWaiters: (() => void)[] = [];
  /** Claimed rows waiting for a slot (claim-ahead), oldest event first, with when each was claimed. */
  readonly #ready: { row: Row; claimedAt: number }[] = [];

  constructor(
    private readonly steps: LoopSteps,
    private readonly settings: LoopSettings,
    private readonly clock: Clock = systemClock,
  ) {}

  get state(): LoopState {
    return this.#state;
  }

  /** Handlers running in this worker now. */
  get running(): number {
    return this.#slots.size;
  }

  /** Starts polling (recover, then claim), every `pollIntervalMs`. */
  start(): void {
    this.#poll();
  }

  /** Claims now if a slot is free; after the pass under way if there is one. Resolves when this pass ends. */
  wake(): Promise<void> {
    if (this.#state !== 'running') return Promise.resolve();
    if (this.#claiming !== undefined) {
      this.#claimAgain = true;
      return this.#claiming;
    }
    const pass = this.#claimWhileFree().finally(() => {
      this.#claiming = undefined;
      if (this.#claimAgain) {
        this.#claimAgain = false;
        void this.wake();
      } else this.#settleIdle();
    });
    this.#claiming = pass;
    return pass;
  }

  /** Resolves once no claim is under way and no handler runs in this worker. */
  whenIdle(): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Claims no more, gives back the rows claimed ahead, cancels the timers, and resolves once the
   * claim under way and every handler have finished.
   */
  async stop(): Promise<void> {
    if (this.#state === 'running') {
      this.#state = 'stopping';
      for (const cancel of this.#timers) cancel();
      this.#timers.clear();
    }
    // A claim pass under way gives back what it takes from now on; slots only end from here.
    await Promise.allSettled([this.#claiming, this.#polling]);
    // Tracked in #releasing, so that a second stop() waits for these releases too.
    for (const { row } of this.#ready.splice(0)) this.#startRelease(row);
    await Promise.allSettled([...this.#slots, ...this.#releasing]);
    this.#state = 'stopped';
    this.#settleIdle();
  }

  /**
   * Claims while a slot would otherwise idle, or once half the claim-ahead has been used (one
   * claim then refills several rows). Rows go to the slots first, the rest wait in `#ready`.
   */
  async #claimWhileFree(): Promise<void> {
    const { concurrency, batchSize, claimAhead } = this.settings;
    while (this.#state === 'running') {
      this.#startReady();
      const held = this.#slots.size + this.#ready.length;
      const room = concurrency + claimAhead - held;
      if (room <= 0 || (held >= concurrency && room < Math.ceil(claimAhead / 2))) return;
      const wanted = Math.min(batchSize, room);
      const rows = await this.steps.claim(wanted);
      if (rows === undefined) {
        this.#claimAgain = false; // the database failed: the poll tries again, not a hot loop
        return;
      }
      const claimedAt = this.clock.now();
      for (const row of rows) {
        if (this.#state === 'running') this.#ready.push({ row, claimedAt });
        else await this.steps.release(row); // stop() came while claiming
      }
      this.#startReady();
      this.#watchStale();
      if (rows.length < wanted) {
        this.#startReady();
        return;
      }
    }
  }

  /** Half the lease: a row held ahead that long goes back rather than race a worker that may take it. */
  #staleAfterMs(): number {
    return this.settings.leaseSeconds * 500;
  }

  /** Starts waiting rows while slots are free; never waits for a claim under way. */
  #startReady(): void {
    this.#releaseStale();
    while (this.#state === 'running' && this.#slots.size < this.settings.concurrency && this.#ready.length > 0)
      this.#startSlot(this.#ready.shift()!.row);
  }

  /**
   * Slots may stay busy past the lease: the held rows then go back on a timer, not when a slot
   * frees. One timer at a time, for the oldest held row (thousands of claims a second would
   * otherwise each leave one behind).
   */
  #watchStale(): void {
    if (this.#staleTimerSet || this.#ready.length === 0) return;
    this.#staleTimerSet = true;
    const dueInMs = this.#ready[0]!.claimedAt + this.#staleAfterMs() - this.clock.now();
    this.#after(Math.max(0, Math.ceil(dueInMs)) + 1, () => {
      this.#staleTimerSet = false;
      this.#releaseStale();
      this.#watchStale();
    });
  }

  /** Gives back (pending, its attempt undone) every held row whose lease is half gone, slots free or not. */
  #releaseStale(): void {
    const staleAt = this.clock.now() - this.#staleAfterMs();
    // Oldest claims first: the stale ones lead the queue.
    while (this.#ready.length > 0 && this.#ready[0]!.claimedAt < staleAt) this.#startRelease(this.#ready.shift()!.row);
  }

  /** A release counts as work under way: stop() and whenIdle() wait for it. */
  #startRelease(row: Row): void {
    const slot: Promise<void> = this.steps.release(row).finally(() => {
      this.#releasing.delete(slot);
      void this.wake();
      this.#settleIdle();
    });
    this.#releasing.add(slot);
  }

  #startSlot(row: Row): void {
    const slot: Promise<void> = this.steps
      .run(row)
      .then((outcome) => {
        if (outcome.kind === 'failed') this.#after(outcome.retryInMs + RETRY_SLACK_MS, () => void this.wake());
      })
      .finally(() => {
        this.#slots.delete(slot);
        this.#startReady();
        void this.wake();
        this.#settleIdle();
      });
    this.#slots.add(slot);
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

  /** Retry timers need not keep the process alive: the poll picks those rows up too. */
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
    return this.#slots.size === 0 && this.#claiming === undefined && this.#ready.length === 0 && this.#releasing.size === 0;
  }

  #settleIdle(): void {
    if (this.#idle()) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }
}
