import type { AnyWebhookEvent } from '../../events/types.js';
import type { WorkerRuntime } from '../../receiver/inbox-contract.js';
import { describeThrown } from '../../shared/thrown.js';
import type { Driver, DriverTransaction, Row, Statement } from '../database/driver.js';
import { inboxError } from '../errors.js';
import { boundError, failureDetail, toBytes } from '../rows.js';
import { retryDelayMs } from './backoff.js';
import type { ResolvedWorkOptions } from './options.js';
import type { WorkerSql } from './sql.js';

/** A delivery this worker claimed: the claim already recorded the attempt. */
export interface Claimed {
  readonly id: string;
  readonly body: Uint8Array;
  readonly attempt: number;
  /** Attempts counted against maxAttempts, this one included. */
  readonly budgetUsed: number;
  readonly replayed: boolean;
  /** For its `process` span: what the row says, and the receiving span's `traceparent`. */
  readonly action: string | undefined;
  readonly app: string | undefined;
  readonly traceContext: string | undefined;
  /** `reconciled` for a row `inbox reconcile --record` rebuilt from the rack's API. */
  readonly origin?: 'received' | 'reconciled';
}

const optionalText = (value: unknown) => (typeof value === 'string' ? value : undefined);

export function claimedFromRow(row: Row): Claimed {
  const attempt = Number(row['attempts']);
  return {
    id: String(row['id']),
    body: toBytes(row['body']),
    attempt,
    budgetUsed: attempt - Number(row['attempt_base']),
    replayed: row['replayed_at'] !== null && row['replayed_at'] !== undefined,
    action: optionalText(row['action']),
    app: optionalText(row['app']),
    traceContext: optionalText(row['trace_context']),
    origin: row['origin'] === 'reconciled' ? 'reconciled' : 'received',
  };
}

/**
 * What came of one attempt, and so which statement of `work/sql.ts` records it:
 * - `succeeded`: `done`, the first statement of the handlers' transaction (their writes and the mark commit together);
 * - `failed`: `fail`, pending again in `retryInMs`;
 * - `dead`: `fail` with dead (no attempts left, or the stored body no longer parses);
 * - `lease-lost`: none: another worker took the delivery after this one's lease ran out;
 * - `unrecorded`: `fail` itself failed (the database went away): none now; the row stays running
 *   and `recover` counts the attempt as crashed when its lease runs out.
 * A worker that stops mid-attempt records nothing: `recover` (another worker, or this one's drain) does.
 */
export type Outcome =
  | { readonly kind: 'succeeded' }
  | { readonly kind: 'failed'; readonly retryInMs: number }
  | { readonly kind: 'dead' }
  | { readonly kind: 'lease-lost' }
  | { readonly kind: 'unrecorded' };

export interface RunEnvironment {
  readonly driver: Driver;
  readonly sql: WorkerSql;
  readonly runtime: WorkerRuntime;
  readonly options: ResolvedWorkOptions;
  /** The table's name for error messages. */
  readonly table: string;
  /** The database failed while `doing`: logged once per outage by the loop. */
  readonly databaseFailed: (error: unknown, doing: string) => void;
}

/** Thrown inside the handler's transaction to roll it back. */
class HandlersFailed {
  constructor(readonly failures: readonly unknown[]) {}
}
const LEASE_LOST = Symbol('lease lost');

/** Where the handlers' transaction runs: the driver's own, or a worker slot's lane (pg-lane.ts). */
export type Transact = <R>(fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>, opening: Statement) => Promise<R>;

/**
 * Runs one claimed delivery's handlers and records the outcome; never rejects. `signal`: the
 * handlers' `context.signal`; `transact`: where their transaction runs (by default the driver's).
 */
export async function runDelivery(
  env: RunEnvironment,
  claimed: Claimed,
  signal: AbortSignal,
  transact: Transact = (fn, opening) => env.driver.transaction(fn, opening),
): Promise<Outcome> {
  const { runtime } = env;
  const event = parseClaimed(runtime, claimed);
  if (event instanceof Unparsable) {
    const recorded = await recordFailure(env, claimed, event.message, true, 0, event.error);
    logUnparsable(runtime, claimed);
    return recorded ? { kind: 'dead' } : { kind: 'unrecorded' };
  }
  const delivery = { id: claimed.id, attempt: claimed.attempt, origin: claimed.origin ?? 'received' };
  try {
    // The mark opens the transaction (sent with its BEGIN): it locks the row for the handlers, and
    // their failure rolls it back (see sql.ts).
    const mark = { text: env.sql.done, params: [claimed.id, env.options.workerId, claimed.attempt] };
    await transact(async (tx, held) => {
      if (held.length === 0) throw LEASE_LOST;
      const failures = await runtime.runHandlers(event, { delivery, transaction: tx.client, signal });
      if (failures.length > 0) throw new HandlersFailed(failures);
    }, mark);
  } catch (error) {
    if (error === LEASE_LOST) {
      runtime.log({
        level: 'warn',
        event: 'retried',
        message: 'the lease ran out before the handlers started; another worker has the delivery',
        action: event.action,
        deliveryId: claimed.id,
        attempt: claimed.attempt,
      });
      return { kind: 'lease-lost' };
    }
    const failures = error instanceof HandlersFailed ? error.failures : [inboxError(error, env.table, 'running handlers')];
    const dead = claimed.budgetUsed >= env.options.maxAttempts;
    const retryInMs = dead ? 0 : retryDelayMs(env.options.backoff, claimed.budgetUsed);
    const recorded = await recordFailure(env, claimed, failures.map(describeThrown).join('; '), dead, retryInMs, failures[0]);
    await runtime.reportFailure(event, failures, { ...delivery, willRetry: !dead });
    if (!recorded) return { kind: 'unrecorded' };
    return dead ? { kind: 'dead' } : { kind: 'failed', retryInMs };
  }
  logProcessed(runtime, claimed, event.action);
  return { kind: 'succeeded' };
}

/** A stored body that parsed when it was accepted and no longer does (a stricter SDK version, validate): no retry helps. */
export class Unparsable {
  readonly message: string;
  constructor(readonly error: unknown) {
    this.message = `the stored body no longer parses: ${describeThrown(error)}`;
  }
}

export function parseClaimed(runtime: WorkerRuntime, claimed: Claimed): AnyWebhookEvent | Unparsable {
  try {
    return runtime.parseStored(claimed.body);
  } catch (error) {
    return new Unparsable(error);
  }
}

export function logUnparsable(runtime: WorkerRuntime, claimed: Claimed): void {
  runtime.log({
    level: 'error',
    event: 'dead',
    message: 'the stored body no longer parses: the delivery is dead',
    deliveryId: claimed.id,
    attempt: claimed.attempt,
  });
}

/** A replay's first attempt says `replayed`, every other success `processed`. */
export function logProcessed(runtime: WorkerRuntime, claimed: Claimed, action: string): void {
  const replayed = claimed.replayed && claimed.budgetUsed === 1;
  runtime.log({
    level: 'info',
    event: replayed ? 'replayed' : 'processed',
    message: replayed ? 'replayed delivery processed' : 'delivery processed',
    action,
    deliveryId: claimed.id,
    attempt: claimed.attempt,
  });
}

/**
 * `fail`: pending again in `delayMs`, or dead, with the first failure's class and bounded stack.
 * False when the database did not take it.
 */
async function recordFailure(
  env: RunEnvironment,
  claimed: Claimed,
  message: string,
  dead: boolean,
  delayMs: number,
  thrown: unknown,
): Promise<boolean> {
  const { errorClass, errorStack } = failureDetail(thrown);
  try {
    await env.driver.query(env.sql.fail, [
      claimed.id,
      env.options.workerId,
      claimed.attempt,
      delayMs,
      dead,
      boundError(message),
      errorClass,
      errorStack,
    ]);
    return true;
  } catch (error) {
    // The row stays running; when its lease runs out, recovery counts the attempt.
    env.databaseFailed(error, 'recording a failed attempt');
    return false;
  }
}
