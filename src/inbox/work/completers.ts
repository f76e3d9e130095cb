import type { WorkerTelemetry } from '../../telemetry/process.js';
import type { Row } from '../database/driver.js';
import type { TableNames } from '../schema/table-name.js';
import { batchSql } from './batch-sql.js';
import { withAttemptTelemetry } from './batch-telemetry.js';
import { runBatched, type Completion, type Recording } from './run-batched.js';
import { claimedFromRow, runDelivery, type RunEnvironment, type Transact } from './run-delivery.js';

/**
 * How a mode records outcomes: the one difference between the modes. The default mode records
 * each in the handlers' own transaction; `mode: 'batched'` hands them to one statement for many.
 */
export interface Completer {
  /**
   * Runs one claimed row's handlers; resolves when they end (its slot frees); never rejects. The
   * default mode goes on with `next()`'s rows in the same slot while it gives one (see below).
   */
  run(row: Row, signal: AbortSignal, next: () => Row | undefined): Promise<void>;
  /** Outcomes handed over and not yet recorded (batched: waiting for their statement). */
  readonly unrecorded: number;
  /** Resolves once every outcome handed over so far is recorded (or its statement failed). */
  recorded(): Promise<void>;
  /** Running handlers hold no lock on their rows, so their leases are renewed while they run. */
  readonly renewsLeases: boolean;
  /** stop() ran out of time: outcomes that arrive from now on are left to the lease. */
  abandon(): void;
}

/** What the loop gives a completer: wake-ups for retries it recorded, and word that it recorded some. */
export interface CompleterHooks {
  retryDue(inMs: number): void;
  recorded(): void;
}

/** The most deliveries a slot runs on one connection before giving it back to the pool. */
const LANE_RUN = 100;

/**
 * The default mode: each outcome is recorded in the handlers' own transaction (or by `fail`), before
 * the slot frees. Where the driver has lanes (pg pools), a slot keeps its connection while the loop
 * has rows waiting (`next`), and each delivery's COMMIT goes with the next one's BEGIN and done-mark:
 * one round trip a delivery (pg-lane.ts).
 */
export function transactionalCompleter(env: RunEnvironment, telemetry: WorkerTelemetry, hooks: CompleterHooks): Completer {
  const runOne = async (row: Row, signal: AbortSignal, transact?: Transact) => {
    const claimed = claimedFromRow(row);
    const outcome = await telemetry.attempt(claimed, () => runDelivery(env, claimed, signal, transact));
    if (outcome.kind === 'failed') hooks.retryDue(outcome.retryInMs);
  };
  return {
    unrecorded: 0,
    renewsLeases: false, // a running handler's transaction holds its row locked
    async run(row, signal, next) {
      const lane = env.driver.lane?.();
      if (lane === undefined) return runOne(row, signal);
      const unsettled = new Set<Promise<void>>();
      try {
        let current: Row | undefined = row;
        for (let run = 1; current !== undefined; run++) {
          const turn = lane.turn();
          const delivery: Promise<void> = runOne(current, signal, (fn, opening) => turn.transaction(fn, opening)).finally(() => {
            turn.skip();
            unsettled.delete(delivery);
          });
          unsettled.add(delivery);
          const handedOver = await Promise.race([delivery.then(() => 'ended' as const), turn.handedOver]);
          // Its handlers are over and its COMMIT waits for the next BEGIN: the next row goes on this
          // connection. A delivery that failed before its COMMIT ends the run, so that its failure
          // is recorded while the slot holds no connection (only a failed COMMIT's record overlaps
          // the next delivery); so does the run's length, so that a pool's maxUses and
          // maxLifetimeSeconds still see the connection come back.
          if (handedOver !== 'committing' || run >= LANE_RUN) break;
          current = next();
        }
      } finally {
        await lane.close();
        await Promise.all(unsettled);
      }
    },
    recorded: () => Promise.resolve(),
    abandon() {},
  };
}

/** `mode: 'batched'`: one completion statement for many outcomes, with a `process` span per attempt. */
export function batchedCompleter(env: RunEnvironment, names: TableNames, telemetry: WorkerTelemetry, hooks: CompleterHooks): Completer {
  const sql = batchSql(names);
  return new BatchedCompleter(
    (row, signal) => withAttemptTelemetry(telemetry, (claimed) => runBatched(env, claimed, signal))(claimedFromRow(row)),
    (completions) => completeBatch(env, sql.complete, completions),
    hooks,
  );
}

/**
 * Handlers run outside any transaction, and one completion statement records every outcome that
 * finished while the one before was under way.
 */
export class BatchedCompleter implements Completer {
  readonly renewsLeases = true;
  #finished: Completion[] = [];
  #flushing: Promise<void> | undefined;
  #abandoned = false;
  /** Sends the statement waiting for its turn, at once (abandon()). */
  #sendWaiting: (() => void) | undefined;

  constructor(
    /** Runs one row's handlers; never rejects. */
    private readonly attempt: (row: Row, signal: AbortSignal) => Promise<Completion>,
    /** One statement for many outcomes; resolves with the ids recorded, undefined when the database failed. */
    private readonly complete: (completions: readonly Completion[]) => Promise<ReadonlySet<string> | undefined>,
    private readonly hooks: CompleterHooks,
  ) {}

  get unrecorded(): number {
    return this.#finished.length + (this.#flushing === undefined ? 0 : 1);
  }

  async run(row: Row, signal: AbortSignal): Promise<void> {
    const completion = await this.attempt(row, signal); // before reading #finished: a flush may swap it meanwhile
    this.#finished.push(completion);
    this.#flush();
  }

  async recorded(): Promise<void> {
    while (this.#flushing !== undefined) await this.#flushing;
  }

  abandon(): void {
    // What ended before the deadline is recorded, as when its statement went at once: sent now, not a turn later.
    this.#sendWaiting?.();
    this.#abandoned = true;
  }

  /**
   * One completion statement at a time; what finishes meanwhile goes with the next. Sent a turn of
   * the event loop after the first outcome, as graphile-worker's `completeJobBatchDelay: 0`: the
   * handlers of a claim mostly end in the same turn, and sent at once the first outcome went alone
   * (a statement and a commit for one row at the head of every batch).
   */
  #flush(): void {
    if (this.#flushing !== undefined || this.#finished.length === 0) return;
    let sent: Promise<void> | undefined;
    const send = (): Promise<void> => (sent ??= this.#record());
    this.#sendWaiting = () => void send();
    this.#flushing = new Promise<void>(nextTurn).then(send);
  }

  #record(): Promise<void> {
    this.#sendWaiting = undefined;
    const batch = this.#finished;
    this.#finished = [];
    // Abandoned by a stop() past its timeout: left to the lease, the database may be gone already.
    const recording = this.#abandoned ? Promise.resolve(undefined) : this.complete(batch);
    return recording
      .then(async (recorded) => {
        const recordingOf = (id: string): Recording => (recorded === undefined ? 'unrecorded' : recorded.has(id) ? 'recorded' : 'lost');
        await Promise.allSettled(batch.map((completion) => completion.settle(recordingOf(completion.claimed.id))));
        for (const completion of batch)
          if (completion.state === 'pending' && recorded?.has(completion.claimed.id)) this.hooks.retryDue(completion.delayMs);
      })
      .finally(() => {
        this.#flushing = undefined;
        this.#flush();
        this.hooks.recorded();
      });
  }
}

/** After the I/O callbacks of this turn (setImmediate; a zero timeout where a runtime has none). */
const nextTurn = (resolve: () => void): void => void (globalThis.setImmediate ?? setTimeout)(resolve);

/** The completion statement; resolves with the ids recorded, undefined when the database failed. */
async function completeBatch(
  env: RunEnvironment,
  statement: string,
  completions: readonly Completion[],
): Promise<ReadonlySet<string> | undefined> {
  const { driver, options, runtime } = env;
  const input = completions.map(({ claimed, state, delayMs, error }) => ({
    id: claimed.id,
    attempt: claimed.attempt,
    state,
    delay_ms: delayMs,
    error,
  }));
  let rows: Row[];
  try {
    rows = await driver.query(statement, [JSON.stringify(input), options.workerId]);
  } catch (error) {
    // The rows stay running; when their leases run out, recovery counts the attempts as crashed.
    env.databaseFailed(error, 'recording finished attempts');
    return undefined;
  }
  const recorded = new Set(rows.map((row) => String(row['id'])));
  for (const { claimed } of completions) {
    if (recorded.has(claimed.id)) continue;
    runtime.log({
      level: 'warn',
      event: 'retried',
      message: 'the lease ran out before the outcome was recorded; another worker has the delivery',
      deliveryId: claimed.id,
      attempt: claimed.attempt,
    });
  }
  return recorded;
}
