import type { DedupStore } from '../../dedup/store.js';
import type { AnyWebhookEvent } from '../../events/types.js';
import type { VerifiedSignature } from '../../signature/verify.js';
import { WebhookHandlerError } from '../errors.js';
import type { InboxHandlerContext } from '../inbox-contract.js';
import { logContext } from '../log.js';
import type { HandlerRegistry } from '../patterns.js';
import type { Reporting } from '../reporting.js';
import { handlerFailureSummary, runHandlers } from '../run-handlers.js';
import type { ReceiveOptions, ReceiveResult } from '../types.js';
import type { Claimed } from './claim.js';

/** Step 4: run the handlers. `receive()` without an inbox comes here; so does the inbox's worker. */
export interface DispatchRun {
  readonly event: AnyWebhookEvent;
  readonly known: boolean;
  readonly verified: VerifiedSignature;
  readonly started: number;
  readonly acknowledge: ReceiveOptions['acknowledge'];
  /** Undefined when dedup is off. */
  readonly claimed: Claimed | undefined;
}

export interface Dispatcher {
  /** The in-request path: handlers run now, and their failure is the response's. */
  dispatch(run: DispatchRun): ReceiveResult | Promise<ReceiveResult>;
  /** The worker's path: handlers of a stored delivery, with its context; resolves with what they threw. */
  dispatchStored(event: AnyWebhookEvent, known: boolean, context: InboxHandlerContext<unknown>): Promise<readonly unknown[]>;
}

export interface DispatcherOptions {
  registry: HandlerRegistry;
  reporting: Reporting;
  /** Give the claims back after a failure so a copy can still be processed. */
  releaseOnError: boolean;
  store: DedupStore | undefined;
}

export function createDispatcher({ registry, reporting, releaseOnError, store }: DispatcherOptions): Dispatcher {
  /** Failures after the claim: give the keys back, log, tell onError; resolves with the error to throw. */
  const handlersFailed = async (failures: readonly unknown[], run: DispatchRun): Promise<WebhookHandlerError> => {
    const error = new WebhookHandlerError(run.event, [...failures]);
    if (releaseOnError && run.claimed?.state === 'fresh') {
      // async: a store whose release throws instead of rejecting must not keep onError from hearing.
      await Promise.allSettled(run.claimed.claims.map(async ({ key }) => store!.release(key)));
    }
    // The record names what failed, never the handlers' own messages: those may quote anything.
    if (reporting.logging)
      reporting.log(run.started, {
        level: 'error',
        event: 'handler_failed',
        message: handlerFailureSummary(error),
        code: error.code,
        ...logContext(run.event, run.verified),
      });
    await reporting.reportError(error, run.started);
    return error;
  };

  const finish = (run: DispatchRun, result: ReceiveResult, failures: readonly unknown[]): ReceiveResult | Promise<ReceiveResult> => {
    if (failures.length === 0) {
      if (reporting.logging) {
        const message = result.outcome === 'processed' ? 'delivery processed' : 'unknown action; passed to onAny only';
        reporting.log(run.started, { level: 'info', event: result.outcome, message, ...logContext(run.event, run.verified) });
      }
      return result;
    }
    return handlersFailed(failures, run).then((error) => Promise.reject(error));
  };

  return {
    // Returns the result directly when everything finished in this tick (sync handlers), a promise otherwise.
    dispatch(run) {
      const { event } = run;
      if (run.claimed?.state === 'duplicate') {
        if (reporting.logging)
          reporting.log(run.started, {
            level: 'info',
            event: 'duplicate',
            message: 'duplicate delivery dropped',
            ...logContext(event, run.verified),
          });
        return { outcome: 'duplicate', event };
      }
      const result: ReceiveResult = { outcome: run.known ? 'processed' : 'ignored', event };
      const failures = runHandlers(registry.forAction(event.action, run.known), event, undefined);
      const settled =
        failures instanceof Promise
          ? failures.then((settledFailures) => finish(run, result, settledFailures))
          : finish(run, result, failures);
      if (run.acknowledge === 'before-handlers' && settled instanceof Promise) {
        settled.catch(() => {}); // failures are reported by handlersFailed; nothing may escape as unhandled
        return result;
      }
      return settled;
    },

    async dispatchStored(event, known, context) {
      return runHandlers(registry.forAction(event.action, known), event, context);
    },
  };
}
