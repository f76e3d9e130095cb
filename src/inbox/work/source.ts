import type { WorkerRuntime } from '../../receiver/inbox-contract.js';
import type { WorkerTelemetry } from '../../telemetry/process.js';
import type { Driver, Row } from '../../database/driver.js';
import { inboxError } from '../../database/errors.js';
import type { Clock } from '../clock.js';
import type { ResolvedWorkOptions } from './options.js';
import type { WorkerSql } from './sql.js';

/** What the worker's parts share, built once by worker.ts: the loop's source, the recorders and the attempts read it. */
export interface WorkerEnvironment {
  readonly driver: Driver;
  readonly sql: WorkerSql;
  readonly runtime: WorkerRuntime;
  readonly options: ResolvedWorkOptions;
  readonly clock: Clock;
  /** The table's name for messages. */
  readonly table: string;
  /** Where a statement's failure (logged once per outage) and the database's return are told. */
  readonly health: Pick<DatabaseHealth, 'failed' | 'reachable'>;
}

/** Logs a database failure once per outage, not once per poll, and its end. */
export class DatabaseHealth {
  #down = false;

  constructor(
    private readonly runtime: WorkerRuntime,
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
        // The message is a sentence of its own: its full stop goes before the retry clause joins it.
        message: `worker ${this.options.workerId}: ${wrapped.message.replace(/\.$/, '')}; retrying every ${this.options.pollIntervalMs} ms`,
        code: wrapped.code,
      });
    this.#down = true;
  }

  reachable(): void {
    if (!this.#down) return;
    this.#down = false;
    this.runtime.log({
      level: 'info',
      event: 'inbox_reachable',
      message: `worker ${this.options.workerId}: the inbox database is reachable again`,
    });
  }
}

/**
 * What the loop asks of the database, the same in both modes: the claim (with the per-app lock
 * when ordered), release, renew, recovery. Each step handles (logs) its own database errors.
 */
export function workerSource(env: WorkerEnvironment, telemetry: WorkerTelemetry, relisten: () => void) {
  const { driver, sql, options, health } = env;
  // Ordered claims follow one another, per table.
  const orderKey = `rack-webhooks order ${env.table}`;
  return {
    /** Claims up to `wanted` due rows, an attempt counted for each; undefined when the database failed. */
    async claim(wanted: number) {
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
    /** Gives back claimed rows whose handlers never started (pending again, their attempts uncounted); never rejects. */
    async release(rows: readonly Row[]) {
      // Best effort: a row not given back stays claimed until its lease runs out, then recovery takes it.
      const input = rows.map((row) => ({ id: String(row['id']), attempt: Number(row['attempts']) }));
      await driver.query(sql.release, [JSON.stringify(input), options.workerId]).catch(() => {});
    },
    /** Extends the leases of these rows; false when the database failed. */
    async renew(rows: readonly Row[]) {
      try {
        await driver.query(sql.renew, [JSON.stringify(rows.map((row) => String(row['id']))), options.workerId, options.leaseSeconds]);
        return true;
      } catch (error) {
        health.failed(error, 'renewing leases');
        return false;
      }
    },
    /** Before each poll and drain pass: re-LISTEN if the listening connection was lost; rows whose worker stopped mid-attempt: pending again, or dead, each logged. */
    async recover() {
      if (options.listen) relisten();
      let rows: Row[];
      try {
        rows = await driver.query(sql.recover, [options.maxAttempts]);
      } catch (error) {
        return health.failed(error, 'recovering expired leases');
      }
      for (const row of rows) {
        const dead = row['state'] === 'dead';
        if (dead) telemetry.wentDead(String(row['action']));
        env.runtime.log({
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
    },
  };
}

export type LoopSource = ReturnType<typeof workerSource>;
