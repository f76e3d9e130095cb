import type { InboxHandlerContext } from '../../receiver/inbox-contract.js';
import { describeThrown } from '../../shared/thrown.js';
import { WebhookInboxError } from '../errors.js';
import { boundError } from '../rows.js';
import { retryDelayMs } from './backoff.js';
import { logProcessed, logUnparsable, parseClaimed, Unparsable, type Claimed, type RunEnvironment } from './run-delivery.js';

/** One attempt's outcome in `mode: 'batched'`, waiting for the statement that records many. */
export interface Completion {
  readonly claimed: Claimed;
  /** `pending`: retried in `delayMs`. */
  readonly state: 'done' | 'pending' | 'dead';
  readonly delayMs: number;
  readonly error: string | null;
  /** Logs and reports the outcome once the completion statement has run (see `Recording`). */
  readonly settle: (recording: Recording) => Promise<void>;
}

/**
 * What the completion statement did with an outcome: `recorded`; `lost`: not recorded, this
 * worker's lease had run out and another worker has the delivery; `unrecorded`: the statement
 * failed (the row stays running until recovery counts the attempt as crashed).
 */
export type Recording = 'recorded' | 'lost' | 'unrecorded';

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

/** Runs one claimed delivery's handlers outside any transaction; never rejects. `signal`: the handlers' `context.signal`. */
export async function runBatched(env: RunEnvironment, claimed: Claimed, signal: AbortSignal): Promise<Completion> {
  const { runtime } = env;
  const event = parseClaimed(runtime, claimed);
  if (event instanceof Unparsable) {
    return {
      claimed,
      state: 'dead',
      delayMs: 0,
      error: boundError(event.message),
      settle: async (recording) => {
        if (recording === 'recorded') logUnparsable(runtime, claimed);
      },
    };
  }
  const delivery = { id: claimed.id, attempt: claimed.attempt, origin: claimed.origin ?? 'received' };
  const context: InboxHandlerContext<unknown> = { delivery, transaction: NO_TRANSACTION, signal };
  let failures: readonly unknown[];
  try {
    failures = await runtime.runHandlers(event, context);
  } catch (error) {
    failures = [error];
  }
  if (failures.length === 0) {
    return {
      claimed,
      state: 'done',
      delayMs: 0,
      error: null,
      settle: async (recording) => {
        if (recording === 'recorded') logProcessed(runtime, claimed, event.action);
      },
    };
  }
  const dead = claimed.budgetUsed >= env.options.maxAttempts;
  return {
    claimed,
    state: dead ? 'dead' : 'pending',
    delayMs: dead ? 0 : retryDelayMs(env.options.backoff, claimed.budgetUsed),
    error: boundError(failures.map(describeThrown).join('; ')),
    // onError hears of every failure, recorded or not, as in the transactional mode.
    settle: () => runtime.reportFailure(event, failures, { ...delivery, willRetry: !dead }),
  };
}
