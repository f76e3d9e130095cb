import { WebhookHandlerError } from '../../receiver/errors.js';
import type { InboxConnection, ReceiverConnection, ReceiverRuntime, WorkerRuntime } from '../../receiver/inbox-contract.js';
import { handlerFailureSummary } from '../../receiver/run-handlers.js';
import { createPersistStep } from './persist.js';

/**
 * The runtime of every receiver created with an inbox, by receiver: what `inbox.work(receiver)`
 * runs. Weak, so that a receiver dropped by the application is not kept for its inbox's sake.
 */
const runtimes = new WeakMap<object, WorkerRuntime>();

/**
 * What `createReceiver({ inbox })` calls on an inbox, as `inbox.connectReceiver(connection)`: keeps
 * the receiver's runtime for `work(receiver)` and gives the receiver its store step, which calls
 * `connection.inbox.storeDelivery`. An inbox of your own takes it as it is:
 * `{ storeDelivery, countRefusal, connectReceiver }`.
 *
 * @param connection - What the receiver hands over.
 * @returns The receiver's store step.
 */
export function connectReceiver(connection: ReceiverConnection): InboxConnection {
  runtimes.set(connection.receiver, workerRuntime(connection.runtime));
  return { store: createPersistStep(connection) };
}

/** The runtime of a receiver created with an inbox, or undefined. */
export function receiverRuntime(receiver: unknown): WorkerRuntime | undefined {
  return typeof receiver === 'object' && receiver !== null ? runtimes.get(receiver) : undefined;
}

/** The receiver's runtime with the report of a failed attempt: its log record, then onError. */
function workerRuntime(runtime: ReceiverRuntime): WorkerRuntime {
  return {
    ...runtime,
    async reportFailure(event, failures, delivery) {
      const error = new WebhookHandlerError(event, [...failures]);
      const started = runtime.now();
      if (runtime.logging) {
        runtime.log(
          {
            level: delivery.willRetry ? 'warn' : 'error',
            event: delivery.willRetry ? 'retried' : 'dead',
            message: `${handlerFailureSummary(error)}; ${delivery.willRetry ? 'the delivery will be retried' : 'no attempts left: the delivery is dead'}`,
            code: error.code,
            action: event.action,
            deliveryId: delivery.id,
            attempt: delivery.attempt,
          },
          started,
        );
      }
      await runtime.reportError(error, started);
    },
  };
}
