import type { Row } from '../../database/driver.js';
import { WebhookInboxError } from '../../database/errors.js';
import { boundError, failureDetail } from '../rows.js';
import { pause } from '../clock.js';
import type { Attempts, Claimed, Recorded, Recorder } from './run-attempt.js';
import type { WorkerEnvironment } from './source.js';

export type RecorderEnvironment = Pick<WorkerEnvironment, 'driver' | 'sql' | 'options' | 'clock' | 'health'>;

/** A mode's recorder, as the loop drives it. */
export type ModeRecorder = Recorder & Pick<Attempts, 'renewsLeases' | 'abandon'>;

/** Thrown inside the handlers' transaction to roll it back. */
class RolledBack {
  constructor(readonly why: Recorded | { readonly failures: readonly unknown[] }) {}
}

const ABANDONED_ERROR = "the worker stopped: its handlers outlived stop()'s timeoutMs";

/** The one statement that fails abandoned attempts, the same in both modes; never rejects. */
async function abandonRows(env: RecorderEnvironment, rows: readonly Row[]): Promise<void> {
  if (rows.length === 0) return;
  const input = rows.map((row) => ({ id: String(row['id']), attempt: Number(row['attempts']), claimed_at: Number(row['claimed_at']) }));
  try {
    await env.driver.query(env.sql.abandon, [JSON.stringify(input), env.options.workerId, env.options.maxAttempts, ABANDONED_ERROR]);
  } catch (error) {
    // Left to the lease: recovery counts them as crashed.
    env.health.failed(error, 'failing abandoned attempts');
  }
}

/**
 * The default mode: the done-mark opens the handlers' transaction (it locks the row for them and
 * commits with their writes, or rolls back with them); a failure is recorded by `fail` after the
 * rollback. Where the driver chains transactions (pg pools: pg-lane.ts), a COMMIT waits for the
 * next delivery's BEGIN and the slot goes on meanwhile.
 */
export function inlineRecorder(env: RecorderEnvironment): ModeRecorder {
  const { driver, sql, options } = env;
  let abandoned = false;
  return {
    renewsLeases: false, // a running handler's transaction holds its row locked
    async succeed(claimed, handlers, handedOver) {
      const mark = { text: sql.done, params: [claimed.id, options.workerId, claimed.attempt, claimed.claimedAt] };
      const body = async (tx: { client: unknown }, held: Row[]) => {
        if (held.length === 0) throw new RolledBack('lost');
        const failures = await handlers(tx.client);
        if (failures.length > 0) throw new RolledBack({ failures });
        // stop() gave up on it: nothing it wrote commits, and no outcome is recorded after stop() resolved.
        if (abandoned) throw new RolledBack('unrecorded');
      };
      try {
        await (driver.chained ? driver.chained(body, mark, handedOver) : driver.transaction(body, mark));
        return 'recorded';
      } catch (error) {
        if (error instanceof RolledBack) return error.why;
        throw error;
      }
    },
    async fail(claimed, failure) {
      if (abandoned) return 'unrecorded';
      const { errorClass, errorStack } = failureDetail(failure.thrown);
      const params = [
        claimed.id,
        options.workerId,
        claimed.attempt,
        failure.retryInMs,
        failure.dead,
        boundError(failure.message),
        errorClass,
        errorStack,
        claimed.claimedAt,
      ];
      try {
        return (await driver.query(sql.fail, params)).length > 0 ? 'recorded' : 'lost';
      } catch (error) {
        // The row stays running; when its lease runs out, recovery counts the attempt.
        env.health.failed(error, 'recording a failed attempt');
        return 'unrecorded';
      }
    },
    async abandon(rows) {
      abandoned = true;
      // The running handlers' transactions hold their rows (the statement would skip them), and on
      // one connection (PGlite, a pg Client) it would wait behind them: left to the lease there.
      if (driver.parallel) await abandonRows(env, rows);
    },
  };
}

function noTransaction(): never {
  throw new WebhookInboxError(
    'inbox_no_transaction',
    "context.transaction is not available in a worker with mode: 'batched': its handlers run outside any transaction. " +
      "Use the default mode (mode: 'transactional') for handlers that write to the inbox's database with the delivery.",
  );
}

/**
 * `context.transaction` in batched mode: destructuring it is harmless (handlers written as
 * `(event, { delivery, transaction })` keep working); any use of it throws the typed error.
 */
const NO_TRANSACTION: unknown = new Proxy(function noTransactionClient() {}, {
  get: (_target, key) => (key === 'then' || typeof key === 'symbol' ? undefined : noTransaction()),
  has: noTransaction,
  apply: noTransaction,
  construct: noTransaction,
  set: noTransaction,
});

/** One outcome waiting for the completion statement, as its JSON input reads it. */
interface Completion {
  readonly id: string;
  readonly attempt: number;
  readonly state: 'done' | 'pending' | 'dead';
  readonly delay_ms: number;
  readonly error: string | null;
  readonly claimed_at: number;
}

/** Outcomes sent together, and what their statement recorded (undefined: it failed). */
class Batch {
  readonly completions: Completion[] = [];
  settle!: (recorded: ReadonlySet<string> | undefined) => void;
  readonly recorded = new Promise<ReadonlySet<string> | undefined>((resolve) => (this.settle = resolve));
}

const DONE = { state: 'done', delay_ms: 0, error: null } as const;
const UNRECORDED: Promise<Recorded> = Promise.resolve('unrecorded');

/** A failed completion statement is sent again after these waits, then its outcomes are left to the lease. */
const RETRY_MS = [100, 1000] as const;

/**
 * `mode: 'batched'`: handlers run outside any transaction, and one completion statement at a time
 * records every outcome that finished while the one before was under way (as graphile-worker's
 * batched completion): sent a turn of the event loop after the first outcome (`completeJobBatchDelay:
 * 0`), sent again when it fails (RETRY_MS), and with back-pressure: while `batchSize` outcomes
 * wait, a slot is freed only once its own outcome is recorded.
 */
export function batchedRecorder(env: RecorderEnvironment): ModeRecorder {
  const { driver, sql, options, clock } = env;
  let open: Batch | undefined;
  let waiting = 0;
  let sending: Promise<void> | undefined;
  let sendOpenNow: (() => void) | undefined;
  let abandoned = false;

  async function complete(batch: Batch): Promise<void> {
    for (let tried = 0; ; tried++) {
      try {
        const rows = await driver.query(sql.complete, [JSON.stringify(batch.completions), options.workerId]);
        return batch.settle(new Set(rows.map((row) => String(row['id']))));
      } catch (error) {
        // The rows stay running; when their leases run out, recovery counts the attempts as crashed.
        env.health.failed(error, 'recording finished attempts');
        if (tried >= RETRY_MS.length || abandoned) return batch.settle(undefined);
        await pause(clock, RETRY_MS[tried]!, false);
      }
    }
  }

  /** One statement at a time; the open batch goes a turn after its first outcome, or once the one before has answered. */
  function schedule(): void {
    if (sending !== undefined || open === undefined) return;
    let go!: () => void;
    const turn = new Promise<void>((resolve) => (go = resolve));
    sendOpenNow = go;
    sending = (abandoned ? Promise.resolve() : turn.then(() => {})).then(async () => {
      sendOpenNow = undefined;
      const batch = open!;
      open = undefined;
      waiting -= batch.completions.length;
      await complete(batch);
      sending = undefined;
      schedule();
    });
    if (!abandoned) nextTurn(go);
  }

  /** Not async: one promise turn a row, its batch's answer read straight into the outcome. */
  function record(
    claimed: Claimed,
    completion: Omit<Completion, 'id' | 'attempt' | 'claimed_at'>,
    handedOver: () => void,
  ): Promise<Recorded> {
    if (abandoned) return UNRECORDED;
    const batch = (open ??= new Batch());
    batch.completions.push({ id: claimed.id, attempt: claimed.attempt, claimed_at: claimed.claimedAt, ...completion });
    if (++waiting <= options.batchSize) handedOver();
    schedule();
    return batch.recorded.then((recorded) => (recorded === undefined ? 'unrecorded' : recorded.has(claimed.id) ? 'recorded' : 'lost'));
  }

  return {
    renewsLeases: true,
    async succeed(claimed, handlers, handedOver) {
      let failures: readonly unknown[];
      try {
        failures = await handlers(NO_TRANSACTION);
      } catch (error) {
        failures = [error];
      }
      if (failures.length > 0) return { failures };
      // Awaited, not returned: an async function that returns a promise takes two more turns to settle.
      return await record(claimed, DONE, handedOver);
    },
    fail: (claimed, failure, handedOver) =>
      record(
        claimed,
        { state: failure.dead ? 'dead' : 'pending', delay_ms: failure.dead ? 0 : failure.retryInMs, error: boundError(failure.message) },
        handedOver,
      ),
    async abandon(rows) {
      // What ended before the deadline is recorded, sent now rather than a turn later; nothing after.
      abandoned = true;
      sendOpenNow?.();
      while (sending !== undefined) await sending;
      await abandonRows(env, rows);
    },
  };
}

/** After the I/O callbacks of this turn (setImmediate; a zero timeout where a runtime has none). */
const nextTurn = (resolve: () => void): void => void (globalThis.setImmediate ?? setTimeout)(resolve);
