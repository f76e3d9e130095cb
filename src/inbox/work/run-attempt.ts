import type { AnyWebhookEvent } from '../../events/types.js';
import type { WorkerRuntime } from '../../receiver/inbox-contract.js';
import { describeThrown } from '../../shared/thrown.js';
import type { Outcome } from '../../telemetry/process.js';
import type { Row } from '../../database/driver.js';
import { inboxError } from '../../database/errors.js';
import { toBytes } from '../rows.js';
import { retryDelayMs } from './backoff.js';
import type { WorkerEnvironment } from './source.js';

const optionalText = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** A delivery this worker claimed, read from its row: its attempt is counted (the row's `attempts`), and recorded with its outcome. */
export function claimedFromRow(row: Row) {
  const attempt = Number(row['attempts']);
  return {
    id: String(row['id']),
    body: toBytes(row['body']),
    attempt,
    /** Attempts counted against maxAttempts, this one included. */
    budgetUsed: attempt - Number(row['attempt_base']),
    replayed: row['replayed_at'] !== null && row['replayed_at'] !== undefined,
    /** When the claim took it (seconds since the epoch, the database's clock): the attempt's `started_at`. */
    claimedAt: Number(row['claimed_at']),
    /** For its `process` span: what the row says, and the receiving span's `traceparent`. */
    action: optionalText(row['action']),
    app: optionalText(row['app']),
    traceContext: optionalText(row['trace_context']),
    /** `reconciled` for a row `inbox reconcile --record` rebuilt from the rack's API. */
    origin: row['origin'] === 'reconciled' ? ('reconciled' as const) : ('received' as const),
  };
}

export type Claimed = Readonly<ReturnType<typeof claimedFromRow>>;

/**
 * What recording an outcome came to: `recorded`; `lost`: this worker's lease had run out and
 * another worker has the delivery; `unrecorded`: the statement failed, or the worker stopped past
 * its `timeoutMs` (the row stays running until recovery counts the attempt as crashed).
 */
export type Recorded = 'recorded' | 'lost' | 'unrecorded';

/** A failed attempt, as a recorder writes it. */
export interface Failure {
  readonly dead: boolean;
  readonly retryInMs: number;
  readonly message: string;
  /** The first failure, for the attempt's error class and stack. */
  readonly thrown: unknown;
}

/**
 * How a mode records outcomes: the one difference between the modes (recorders.ts). `handedOver`
 * says the attempt's slot may take the next delivery before its outcome is recorded (its COMMIT
 * held for the next BEGIN, or its outcome queued for the next completion statement).
 */
export interface Recorder {
  /**
   * Runs the handlers (`handlers(transaction)`: their `context.transaction`) and records their
   * success: the default mode in the one transaction its done-mark opens, so that their writes and
   * the mark commit together; batched mode after them, with other outcomes. Resolves with the
   * handlers' failures when they failed (nothing recorded); rejects when the transaction did.
   */
  succeed(
    claimed: Claimed,
    handlers: (transaction: unknown) => Promise<readonly unknown[]>,
    handedOver: () => void,
  ): Promise<Recorded | { readonly failures: readonly unknown[] }>;
  /** Records a failed attempt: pending again in `retryInMs`, or dead. */
  fail(claimed: Claimed, failure: Failure, handedOver: () => void): Promise<Recorded>;
}

/** What the loop runs for each row it claimed: one attempt, the same in both modes (worker.ts composes it). */
export interface Attempts {
  /**
   * Runs one claimed row's attempt; resolves with its outcome once it is recorded; never rejects.
   * `handedOver`: the attempt's slot may take the next row before then (its COMMIT held for the
   * next BEGIN, or its outcome queued for the next completion statement).
   */
  run(row: Row, signal: AbortSignal, handedOver: () => void): Promise<Outcome>;
  /** Running handlers hold no lock on their rows (batched), so their leases are renewed while they run. */
  readonly renewsLeases: boolean;
  /**
   * stop() ran out of time: records nothing from now on, and fails the attempts still running
   * (`rows`) in one statement; resolves once every statement it sent has answered.
   */
  abandon(rows: readonly Row[]): Promise<void>;
}

export type AttemptEnvironment = Pick<WorkerEnvironment, 'runtime' | 'options' | 'table'> & { readonly recorder: Recorder };

/**
 * One attempt of a claimed delivery, in either mode: parse, run the handlers, record the outcome
 * through the mode's recorder, log it; never rejects. `signal`: the handlers' `context.signal`.
 */
export async function runAttempt(env: AttemptEnvironment, claimed: Claimed, signal: AbortSignal, handedOver: () => void): Promise<Outcome> {
  const { runtime, recorder } = env;
  let event: AnyWebhookEvent;
  try {
    event = runtime.parseStored(claimed.body);
  } catch (error) {
    // It parsed when it was accepted and no longer does (a stricter SDK version, validate): no retry helps.
    const message = `the stored body no longer parses: ${describeThrown(error)}`;
    const recorded = await recorder.fail(claimed, { dead: true, retryInMs: 0, message, thrown: error }, handedOver);
    if (recorded === 'recorded')
      runtime.log({
        level: 'error',
        event: 'dead',
        message: 'the stored body no longer parses: the delivery is dead',
        deliveryId: claimed.id,
        attempt: claimed.attempt,
      });
    return outcomeOf(recorded, { kind: 'dead' }, runtime, claimed);
  }
  const delivery = { id: claimed.id, attempt: claimed.attempt, origin: claimed.origin };
  let ran: Recorded | { readonly failures: readonly unknown[] };
  try {
    ran = await recorder.succeed(claimed, (transaction) => runtime.runHandlers(event, { delivery, transaction, signal }), handedOver);
  } catch (error) {
    ran = { failures: [inboxError(error, env.table, 'running handlers')] };
  }
  if (typeof ran === 'string') {
    if (ran === 'recorded') logProcessed(runtime, claimed, event.action);
    return outcomeOf(ran, { kind: 'succeeded' }, runtime, claimed);
  }
  const { failures } = ran;
  const dead = claimed.budgetUsed >= env.options.maxAttempts;
  const retryInMs = dead ? 0 : retryDelayMs(env.options.backoff, claimed.budgetUsed);
  const message = failures.map(describeThrown).join('; ');
  const recorded = await recorder.fail(claimed, { dead, retryInMs, message, thrown: failures[0] }, handedOver);
  // onError hears of every failure, recorded or not.
  await runtime.reportFailure(event, failures, { ...delivery, willRetry: !dead });
  return outcomeOf(recorded, dead ? { kind: 'dead' } : { kind: 'failed', retryInMs }, runtime, claimed);
}

function outcomeOf(recorded: Recorded, outcome: Outcome, runtime: WorkerRuntime, claimed: Claimed): Outcome {
  if (recorded === 'recorded') return outcome;
  if (recorded === 'unrecorded') return { kind: 'unrecorded' };
  runtime.log({
    level: 'warn',
    event: 'retried',
    message: 'the lease ran out before the outcome was recorded; another worker has the delivery',
    deliveryId: claimed.id,
    attempt: claimed.attempt,
  });
  return { kind: 'lease-lost' };
}

/** A replay's first attempt says `replayed`, every other success `processed`. */
function logProcessed(runtime: WorkerRuntime, claimed: Claimed, action: string): void {
  if (!runtime.logging) return; // no logger: no record built, no clock read, for every delivery
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
