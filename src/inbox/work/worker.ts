import type { WorkerRuntime } from '../../receiver/inbox-contract.js';
import type { Driver } from '../../database/driver.js';
import { inboxError } from '../../database/errors.js';
import { Heartbeat } from '../health/workers.js';
import type { TableNames } from '../schema/table-name.js';
import { pause, settledWithin, systemClock, type Clock } from '../clock.js';
import { WorkerLoop } from './loop.js';
import { resolveWorkOptions, type WorkOptions } from './options.js';
import { batchedRecorder, inlineRecorder } from './recorders.js';
import { claimedFromRow, runAttempt, type Attempts } from './run-attempt.js';
import { DatabaseHealth, workerSource, type WorkerEnvironment } from './source.js';
import { workerSql } from './sql.js';
import { workerTelemetry } from '../../telemetry/process.js';

export type { WorkOptions } from './options.js';

/** Options of `worker.stop(options)`. */
export interface StopOptions {
  /**
   * How long to wait for in-flight handlers, in ms; then their `context.signal` is aborted, their
   * attempts are failed (`abandoned`, due again) in one statement, and `stop()` resolves. A
   * negative or non-number value is a `RangeError`.
   *
   * @defaultValue none: `stop()` waits for the handlers however long they take
   */
  timeoutMs?: number;
}

/** A running worker, as `inbox.work()` returns it. */
export interface Worker {
  /** Its `workerId`, as recorded in attempts and logs. */
  readonly id: string;
  /**
   * Stops claiming, gives back the deliveries claimed ahead (and waits until they are back), lets
   * in-flight handlers finish and their outcomes be recorded: nothing stays claimed. Past
   * `timeoutMs`, aborts the handlers' `context.signal`, fails their attempts (`abandoned`, due
   * again) in one statement and resolves without them: nothing is recorded after it resolved. A
   * handler that holds its row in its own transaction (the default mode) is left to the lease, and
   * its transaction rolls back when it ends. Without `timeoutMs` it waits however long they take.
   */
  stop(options?: StopOptions): Promise<void>;
  /**
   * Resolves when no delivery is due and none is running, on any worker (tests, scripts, one-off
   * catch-up runs). A delivery whose worker died is waited for: once its lease runs out this
   * worker runs it. Retries scheduled for later are not due yet and are not waited for. Rejects
   * with a `WebhookInboxError` when the database cannot be read; resolves at once after `stop()`.
   */
  drain(): Promise<void>;
}

/** `stop()`'s `timeoutMs`, checked (worker.stop() first of all, the loop takes it as checked): a `RangeError` before anything stops. */
function stopTimeout({ timeoutMs }: StopOptions = {}): number | undefined {
  if (timeoutMs !== undefined && !(timeoutMs >= 0))
    throw new RangeError(`stop(): timeoutMs must be a number >= 0, got ${String(timeoutMs)}`);
  return timeoutMs;
}

export function startWorker(
  driver: Driver,
  names: TableNames,
  runtime: WorkerRuntime,
  workOptions: WorkOptions,
  subscribe: (wake: () => void) => () => Promise<void>,
  relisten: () => void,
  clock: Clock = systemClock,
  telemetryEnabled = true,
): Worker {
  const options = resolveWorkOptions(driver, workOptions);
  const sql = workerSql(names, options);
  const table = names.display;
  const env: WorkerEnvironment = { driver, sql, runtime, options, clock, table, health: new DatabaseHealth(runtime, options, table) };
  const telemetry = workerTelemetry(telemetryEnabled, table);
  const source = workerSource(env, telemetry, relisten);
  const batched = options.mode === 'batched';
  const recorder = batched ? batchedRecorder(env) : inlineRecorder(env);
  const attemptEnv = { ...env, recorder };
  const attempts: Attempts = {
    renewsLeases: recorder.renewsLeases,
    run(row, signal, handedOver) {
      const claimed = claimedFromRow(row);
      return telemetry.attempt(claimed, () => runAttempt(attemptEnv, claimed, signal, handedOver));
    },
    abandon: (rows) => recorder.abandon(rows),
  };
  const loop = new WorkerLoop(
    source,
    attempts,
    // Batched: the claim-ahead is the batch. Two batches measured 6% to 10% faster, but one worker
    // then held twice the backlog, leaving another process idle beside it (bench/README.md).
    batched ? { ...options, claimAhead: options.batchSize } : options,
    clock,
  );
  // Wake-ups: notifications from the database and this process's own receivers; the poll as the floor.
  const unsubscribe = options.listen ? subscribe(() => void loop.wake()) : async () => {};
  const heartbeat = new Heartbeat(
    driver,
    names,
    options,
    () => loop.running,
    (ms, fn) => clock.after(ms, fn, false),
  );
  loop.start();
  heartbeat.start();

  return {
    id: options.workerId,
    async stop(stopOptions) {
      const timeoutMs = stopTimeout(stopOptions); // a bad timeoutMs stops nothing
      const startedAt = clock.now();
      const unsubscribed = unsubscribe();
      await loop.stop(stopOptions);
      // Last: the worker is there until its handlers have finished. Within timeoutMs too: on one
      // connection (PGlite) UNLISTEN and the heartbeat's goodbye wait behind a running handler.
      const ending = unsubscribed.then(() => heartbeat.stop());
      if (timeoutMs === undefined) return void (await ending);
      await settledWithin(clock, ending, Math.max(0, timeoutMs - (clock.now() - startedAt)));
    },
    async drain() {
      while (loop.state === 'running') {
        // Deliveries whose worker died count as due once their lease ran out: a catch-up run takes them too.
        await source.recover();
        await loop.wake();
        if (!loop.idle) {
          await loop.whenIdle();
          continue;
        }
        // Nothing running here: is anything due, or running elsewhere (a live worker, or a dead one whose lease has not run out)?
        const [row] = await driver.query(sql.unfinished).catch((error: unknown) => {
          throw inboxError(error, names.display, 'draining');
        });
        if (row === undefined) return;
        // Due, yet not claimed (another worker got there first): look again shortly. Running: when
        // its lease runs out (recovered then), or sooner if its worker finishes it; never a hot loop.
        const waitMs = row['state'] === 'pending' ? 10 : Math.max(50, Math.ceil(Number(row['lease_ms'])));
        await pause(clock, Math.min(options.pollIntervalMs, waitMs));
      }
    },
  };
}
