import type { Row } from '../../database/driver.js';
import { settledWithin, systemClock, type Clock } from '../clock.js';
import type { ResolvedWorkOptions } from './options.js';
import type { Attempts } from './run-attempt.js';
import type { LoopSource } from './source.js';

/** `claimAhead`: rows held claimed beyond the slots, refilled once half of it is used (batched mode: its `batchSize`). */
export type LoopSettings = Pick<ResolvedWorkOptions, 'concurrency' | 'batchSize' | 'claimAhead' | 'pollIntervalMs' | 'leaseSeconds'>;

/**
 * `created`: nothing started; `running`: claims whenever it has room and is woken (a notification,
 * a finished delivery, a retry coming due, the poll); `stopping`: claims nothing more, gives back
 * what it holds, waits for the claim under way and the handlers running; `stopped`: nothing under
 * way that it waits for, no timer left.
 */
export type LoopState = 'created' | 'running' | 'stopping' | 'stopped';

/** A RETRY_SLACK_MS after a retry is due, look for it (its run_at is now() + delay, set a moment later). */
const RETRY_SLACK_MS = 5;

interface Held {
  readonly row: Row;
  /** When its lease runs out by the loop's clock, as claimed or last renewed. */
  leaseEndsAt: number;
}

/**
 * The worker's loop, for both modes: owns the slots (handlers running), the rows held ahead, one
 * claim pass at a time (a wake-up during it runs another after it), the poll, the lease timers,
 * the retry wake-ups, and every database write it starts. What it claims runs as `Attempts`.
 */
export class WorkerLoop {
  #state: LoopState = 'created';
  /** Rows whose handlers run, one a slot. */
  readonly #slots = new Set<Held>();
  /** Attempts started and not yet recorded (running, or their outcome on its way to the database). */
  readonly #unrecorded = new Set<Promise<void>>();
  /** Claimed rows waiting for a slot, oldest claim first. */
  readonly #ready: Held[] = [];
  readonly #releasing = new Set<Promise<void>>();
  readonly #renewing = new Set<Promise<void>>();
  readonly #timers = new Set<() => void>();
  readonly #abort = new AbortController();
  #claiming: Promise<void> | undefined;
  #claimAgain = false;
  #polling: Promise<void> | undefined;
  #staleTimerSet = false;
  #idleWaiters: (() => void)[] = [];

  constructor(
    private readonly source: LoopSource,
    private readonly attempts: Attempts,
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

  /** Starts polling (recover, then claim), every `pollIntervalMs`; renews leases when the mode needs it. */
  start(): void {
    if (this.#state !== 'created') throw new Error(`worker loop: no transition from ${this.#state} to running`);
    this.#state = 'running';
    this.#poll();
    if (this.attempts.renewsLeases) this.#renewLater();
  }

  /** False while anything is claimed, held, running, given back or waiting to be recorded here. */
  get idle(): boolean {
    return (
      this.#slots.size === 0 &&
      this.#claiming === undefined &&
      this.#ready.length === 0 &&
      this.#releasing.size === 0 &&
      this.#renewing.size === 0 &&
      this.#unrecorded.size === 0
    );
  }

  /** Claims now if there is room; after the pass under way if there is one. Resolves when this pass ends. */
  wake(): Promise<void> {
    if (this.#state !== 'running') return Promise.resolve();
    if (this.#claiming !== undefined) {
      this.#claimAgain = true;
      return this.#claiming;
    }
    // Every slot that frees wakes the loop: with no room to claim, no pass (an async pass and its
    // finally were three promise turns a delivery in batched mode, where the batch is claimed ahead).
    this.#startReady();
    if (!this.#roomToClaim()) {
      this.#settleIdle();
      return Promise.resolve();
    }
    const pass = this.#claimWhileRoom().finally(() => {
      this.#claiming = undefined;
      if (this.#claimAgain) {
        this.#claimAgain = false;
        void this.wake();
      } else this.#settleIdle();
    });
    this.#claiming = pass;
    return pass;
  }

  /** Resolves once nothing is claimed, held, running, given back or waiting to be recorded in this worker. */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Claims no more, gives back the rows held ahead and waits until they are back, cancels the
   * timers, and waits for the claim under way, every attempt (handlers and the record of their
   * outcome) and every lease renewal. Past `timeoutMs`, aborts the handlers' `context.signal`,
   * records nothing more, fails the attempts still running in one statement (`Attempts.abandon`),
   * and returns once it has answered.
   */
  async stop({ timeoutMs }: { timeoutMs?: number } = {}): Promise<void> {
    if (this.#state === 'created') return void (this.#state = 'stopped');
    if (this.#state === 'running') {
      this.#state = 'stopping';
      for (const cancel of this.#timers) cancel();
      this.#timers.clear();
    }
    // The whole stop is bounded: on one connection (PGlite) the claim under way and the rows given
    // back queue behind a running handler's transaction, so they count against timeoutMs too.
    const deadline = timeoutMs === undefined ? undefined : this.clock.now() + timeoutMs;
    const inTime = (work: readonly unknown[]) => {
      const settled = Promise.allSettled(work);
      return deadline === undefined
        ? settled.then(() => true)
        : settledWithin(this.clock, settled, Math.max(0, deadline - this.clock.now()));
    };
    // A claim pass under way gives back what it takes from now on; slots only end from here.
    const claimsEnded = await inTime([this.#claiming, this.#polling]);
    this.#startRelease(this.#ready.splice(0).map((held) => held.row));
    const inTimeAll = claimsEnded && (await inTime([...this.#unrecorded]));
    if (!inTimeAll) {
      this.#abort.abort(new DOMException(`the worker stopped: its handlers outlived stop()'s timeoutMs (${timeoutMs} ms)`, 'AbortError'));
      await this.attempts.abandon([...this.#slots].map((held) => held.row));
    }
    // Given back before stop() resolves, so that a pool.end() right after never turns them into
    // crashed attempts; past timeoutMs they are given back when they can, or left to the lease
    // (on one connection they wait behind a handler's transaction).
    if (inTimeAll) await Promise.allSettled([...this.#releasing]);
    await Promise.allSettled([...this.#renewing]);
    if (this.#state === 'stopping') this.#state = 'stopped';
    this.#settleIdle();
  }

  /**
   * Claims while a slot would otherwise idle, or once half the claim-ahead has been used (one
   * claim then refills several rows). Rows go to the slots first, the rest wait in `#ready`. Called
   * by wake() once it found room.
   */
  async #claimWhileRoom(): Promise<void> {
    const { concurrency, batchSize, claimAhead } = this.settings;
    do {
      const wanted = Math.min(batchSize, concurrency + claimAhead - this.#slots.size - this.#ready.length);
      const leaseEndsAt = this.clock.now() + this.settings.leaseSeconds * 1000; // measured from before the claim
      const rows = await this.source.claim(wanted);
      if (rows === undefined) {
        this.#claimAgain = false; // the database failed: the poll tries again, not a hot loop
        return;
      }
      if (this.#state !== 'running') {
        this.#startRelease(rows); // stop() came while claiming
        return;
      }
      for (const row of rows) this.#ready.push({ row, leaseEndsAt });
      this.#startReady();
      this.#watchStale();
      if (rows.length < wanted) return;
    } while (this.#state === 'running' && this.#roomToClaim());
  }

  #roomToClaim(): boolean {
    const { concurrency, claimAhead } = this.settings;
    const held = this.#slots.size + this.#ready.length;
    const room = concurrency + claimAhead - held;
    return room > 0 && (held < concurrency || room >= Math.ceil(claimAhead / 2));
  }

  /** Starts waiting rows while slots are free, the stale ones given back first; never waits for a claim under way. */
  #startReady(): void {
    this.#releaseStale();
    while (this.#state === 'running' && this.#slots.size < this.settings.concurrency && this.#ready.length > 0)
      this.#startSlot(this.#ready.shift()!);
  }

  /** Less than half its lease left: started now, another worker might take it while it runs. */
  #staleAt(held: Held): number {
    return held.leaseEndsAt - this.settings.leaseSeconds * 500;
  }

  /**
   * Slots may stay busy past the lease: the held rows then go back on a timer, not when a slot
   * frees. One timer at a time, for the oldest held row (thousands of claims a second would
   * otherwise each leave one behind).
   */
  #watchStale(): void {
    if (this.#staleTimerSet || this.#ready.length === 0) return;
    this.#staleTimerSet = true;
    const dueInMs = this.#staleAt(this.#ready[0]!) - this.clock.now();
    this.#after(Math.max(0, Math.ceil(dueInMs)) + 1, () => {
      this.#staleTimerSet = false;
      this.#releaseStale();
      this.#watchStale();
    });
  }

  /** Gives back every held row whose lease is half gone, slots free or not (oldest claims lead the queue). */
  #releaseStale(): void {
    const now = this.clock.now();
    let stale = 0;
    while (stale < this.#ready.length && this.#staleAt(this.#ready[stale]!) <= now) stale++;
    if (stale > 0) this.#startRelease(this.#ready.splice(0, stale).map((held) => held.row));
  }

  /** A release counts as work under way: stop() and whenIdle() wait for it. */
  #startRelease(rows: readonly Row[]): void {
    if (rows.length === 0) return;
    const releasing: Promise<void> = this.source.release(rows).finally(() => {
      this.#releasing.delete(releasing);
      void this.wake();
      this.#settleIdle();
    });
    this.#releasing.add(releasing);
  }

  /**
   * A slot frees when its attempt hands over (the next row may start while the outcome is
   * recorded) or ends; the attempt counts as under way until its outcome is recorded.
   */
  #startSlot(held: Held): void {
    this.#slots.add(held);
    const free = () => {
      if (!this.#slots.delete(held)) return;
      this.#startReady();
      void this.wake();
      this.#settleIdle();
    };
    const attempt: Promise<void> = this.attempts.run(held.row, this.#abort.signal, free).then((outcome) => {
      if (outcome.kind === 'failed') this.#after(outcome.retryInMs + RETRY_SLACK_MS, () => void this.wake());
      this.#unrecorded.delete(attempt);
      free();
      this.#settleIdle();
    });
    this.#unrecorded.add(attempt);
  }

  /** Every third of a lease, one statement extends the leases of every row held here, queued or running; stop() waits for it. */
  #renewLater(): void {
    const leaseMs = this.settings.leaseSeconds * 1000;
    this.#after(leaseMs / 3, () => {
      const held = [...this.#ready, ...this.#slots];
      if (held.length === 0) return this.#renewLater();
      const startedAt = this.clock.now();
      const renewing: Promise<void> = this.source.renew(held.map((h) => h.row)).then((renewed) => {
        if (renewed) for (const h of held) h.leaseEndsAt = startedAt + leaseMs;
        this.#renewing.delete(renewing);
        this.#renewLater();
        this.#settleIdle();
      });
      this.#renewing.add(renewing);
    });
  }

  #poll(): void {
    if (this.#state !== 'running') return;
    this.#polling = this.source
      .recover()
      .then(() => this.wake())
      .finally(() => {
        this.#polling = undefined;
        this.#after(this.settings.pollIntervalMs, () => this.#poll(), true);
      });
  }

  /** Only the poll keeps the process alive: retries and leases need not, the poll picks those rows up too. */
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

  #settleIdle(): void {
    if (this.idle) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }
}
