import type { Row } from '../database/driver.js';
import type { TableNames } from '../schema/table-name.js';
import { BatchLoop } from './batch.js';
import { batchSql } from './batch-sql.js';
import type { Clock } from './loop.js';
import type { WorkerTelemetry } from '../../telemetry/process.js';
import { withAttemptTelemetry } from './batch-telemetry.js';
import { runBatched } from './run-batched.js';
import { claimedFromRow, type RunEnvironment } from './run-delivery.js';

/** The steps both modes share: the claim (with the per-app lock when ordered), recovery, re-LISTEN. */
export interface SharedSteps {
  claim(wanted: number): Promise<Row[] | undefined>;
  recover(): Promise<void>;
  beforePoll(): void;
}

/** `mode: 'batched'`: the loop over the batched statements of `work/batch-sql.ts`, a `process` span per attempt. */
export function startBatchLoop(
  env: RunEnvironment,
  names: TableNames,
  shared: SharedSteps,
  telemetry: WorkerTelemetry,
  clock: Clock,
): BatchLoop {
  const { driver, options, runtime } = env;
  const sql = batchSql(names);
  return new BatchLoop(
    {
      ...shared,
      toClaimed: claimedFromRow,
      run: withAttemptTelemetry(telemetry, (claimed) => runBatched(env, claimed)),
      async complete(completions) {
        const input = completions.map(({ claimed, state, delayMs, error }) => ({
          id: claimed.id,
          attempt: claimed.attempt,
          state,
          delay_ms: delayMs,
          error,
        }));
        let rows: Row[];
        try {
          rows = await driver.query(sql.complete, [JSON.stringify(input), options.workerId]);
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
      },
      async release(claimed) {
        const input = claimed.map(({ id, attempt }) => ({ id, attempt }));
        await driver.query(sql.release, [JSON.stringify(input), options.workerId]).catch(() => {});
      },
      async renew(ids) {
        try {
          await driver.query(sql.renew, [JSON.stringify(ids), options.workerId, options.leaseSeconds]);
          return true;
        } catch (error) {
          env.databaseFailed(error, 'renewing leases');
          return false;
        }
      },
    },
    options,
    clock,
  );
}
