import type { ReceiverRuntime } from '../../receiver/inbox-contract.js';
import type { Driver, Row } from '../database/driver.js';
import { inboxError } from '../errors.js';
import { Heartbeat } from '../health/workers.js';
import type { TableNames } from '../schema/table-name.js';
import { startBatchLoop } from './batch-steps.js';
import { systemClock, WorkerLoop, type Clock } from './loop.js';
import { resolveWorkOptions, type ResolvedWorkOptions, type WorkOptions } from './options.js';
import { claimedFromRow, runDelivery, type RunEnvironment } from './run-delivery.js';
import { workerSql, type WorkerSql } from './sql.js';
import { workerTelemetry, type WorkerTelemetry } from '../../telemetry/process.js';

export type { WorkOptions } from './options.js';

/** A running worker, as `inbox.work()` returns it. */
export interface Worker {
  /** Its `workerId`, as recorded in attempts and logs. */
  readonly id: string;
  /** Stops claiming, gives back the deliveries claimed ahead, lets in-flight handlers finish: nothing stays claimed. */
  stop(): Promise<void>;
  /**
   * Resolves when no delivery is due and none is running, on any worker (tests, scripts, one-off
   * catch-up runs). A delivery whose worker died is waited for: once its lease runs out this
   * worker runs it. Retries scheduled for later are not due yet and are not waited for. Rejects
   * with a `WebhookInboxError` when the database cannot be read; resolves at once after `stop()`.
   */
  drain(): Promise<void>;
}

/** Logs a database failure once per outage, not once per poll, and its end. */
class DatabaseHealth {
  #down = false;

  constructor(
    private readonly runtime: ReceiverRuntime,
    private readonly options: ResolvedWorkOptions,
    private readonly table: string,
  ) {}

  failed(error: unknown, doing: string): void {
    const wrapped = inboxError(error, this.table, doing);
    if (!this.#down)
      this.runtime.log({
        level: 'error',
        // Only migrate() reports a newer schema, and a database's error is never inbox_no_transaction:
        // a worker's statements fail as inbox_failed.
        event: wrapped.code === 'inbox_schema_newer' || wrapped.code === 'inbox_no_transaction' ? 'inbox_failed' : wrapped.code,
        message: `worker ${this.options.workerId}: ${wrapped.message}; retrying every ${this.options.pollIntervalMs} ms`,
        code: wrapped.code,
      });
    this.#down = true;
  }

  reachable(): void {
    if (!this.#down) return;
    this.#down = false;
    this.runtime.log({
      level: 'info',
      event: 'inbox_unavailable',
      message: `worker ${this.options.workerId}: the inbox database is reachable again`,
    });
  }
}

async function recover(
  driver: Driver,
  sql: WorkerSql,
  options: ResolvedWorkOptions,
  runtime: ReceiverRuntime,
  health: DatabaseHealth,
  telemetry: WorkerTelemetry,
) {
  let rows: Row[];
  try {
    rows = await driver.query(sql.recover, [options.maxAttempts]);
  } catch (error) {
    health.failed(error, 'recovering expired leases');
    return;
  }
  for (const row of rows) {
    const dead = row['state'] === 'dead';
    if (dead) telemetry.wentDead(String(row['action']));
    runtime.log({
      level: dead ? 'error' : 'warn',
      event: dead ? 'dead' : 'retried',
      message: dead
        ? `attempt ${String(row['attempts'])} did not finish (its worker stopped) and no attempts are left: the delivery is dead`
        : `attempt ${String(row['attempts'])} did not finish (its worker stopped): due again`,
      action: String(row['action']),
      deliveryId: String(row['id']),
      attempt: Number(row['attempts']),
    });
  }
}

export function startWorker(
  driver: Driver,
  names: TableNames,
  runtime: ReceiverRuntime,
  workOptions: WorkOptions,
  subscribe: (wake: () => void) => () => Promise<void>,
  relisten: () => void,
  clock: Clock = systemClock,
  telemetryEnabled = true,
): Worker {
  const options = resolveWorkOptions(driver, workOptions);
  const sql = workerSql(names, options);
  // Ordered claims follow one another, per table.
  const orderKey = `rack-webhooks order ${names.display}`;
  const health = new DatabaseHealth(runtime, options, names.display);
  const env: RunEnvironment = {
    driver,
    sql,
    runtime,
    options,
    table: names.display,
    databaseFailed: (error, doing) => health.failed(error, doing),
  };
  const telemetry = workerTelemetry(telemetryEnabled, names.display);
  const recoverExpired = () => recover(driver, sql, options, runtime, health, telemetry);
  const steps = {
    async claim(wanted: number): Promise<Row[] | undefined> {
      try {
        const params = [wanted, options.workerId, options.leaseSeconds];
        const rows =
          options.order === 'per-app'
            ? await driver.transaction(async (tx) => {
                await tx.query(sql.orderLock, [orderKey]);
                return tx.query(sql.claim, params);
              })
            : await driver.query(sql.claim, params);
        health.reachable();
        return rows;
      } catch (error) {
        health.failed(error, 'claiming deliveries');
        return undefined;
      }
    },
    recover: recoverExpired,
    beforePoll: () => {
      if (options.listen) relisten();
    },
  };
  const loop =
    options.mode === 'batched'
      ? startBatchLoop(env, names, steps, telemetry, clock)
      : new WorkerLoop(
          {
            ...steps,
            run: (row) => {
              const claimed = claimedFromRow(row);
              return telemetry.attempt(claimed, () => runDelivery(env, claimed));
            },
            async release(row) {
              await driver.query(sql.release, [String(row['id']), options.workerId, Number(row['attempts'])]).catch(() => {});
            },
          },
          options,
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
    async stop() {
      const unsubscribed = unsubscribe();
      await loop.stop();
      await unsubscribed;
      // Last: the worker is there until its handlers have finished.
      await heartbeat.stop();
    },
    async drain() {
      while (loop.state === 'running') {
        // Deliveries whose worker died count as due once their lease ran out: a catch-up run takes them too.
        await recoverExpired();
        await loop.wake();
        if (loop.running > 0) {
          await loop.whenIdle();
          continue;
        }
        // Nothing running here: is anything due, or running elsewhere (a live worker, or a dead one whose lease has not run out)?
        let unfinished: Row[];
        try {
          unfinished = await driver.query(sql.unfinished);
        } catch (error) {
          throw inboxError(error, names.display, 'draining');
        }
        const [row] = unfinished;
        if (row === undefined) return;
        // Due, yet not claimed (another worker got there first): look again shortly. Running: when
        // its lease runs out (recovered then), or sooner if its worker finishes it; never a hot loop.
        const waitMs = row['state'] === 'pending' ? 10 : Math.max(50, Math.ceil(Number(row['lease_ms'])));
        await new Promise((resolve) => setTimeout(resolve, Math.min(options.pollIntervalMs, waitMs)));
      }
    },
  };
}
