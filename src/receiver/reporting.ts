import { errorCode } from './log.js';
import type { ErrorHandler, ReceiverLogRecord } from './types.js';

/** How every step tells the application what happened: the logger option and onError handlers. */
export interface Reporting {
  /** False when no logger was given: steps skip building records. */
  readonly logging: boolean;
  log(started: number, record: Omit<ReceiverLogRecord, 'durationMs'>): void;
  reportError(error: Parameters<ErrorHandler>[0], started: number): Promise<void>;
  readonly errorHandlers: Set<ErrorHandler>;
  readonly clock: () => number;
}

export function createReporting(logger: ((record: ReceiverLogRecord) => void) | undefined, clock: () => number): Reporting {
  const errorHandlers = new Set<ErrorHandler>();
  const log: Reporting['log'] = (started, record) => {
    if (logger === undefined) return;
    try {
      logger({ ...record, durationMs: clock() - started });
    } catch {
      // A broken logger must not turn a good delivery into a failure.
    }
  };
  return {
    logging: logger !== undefined,
    log,
    errorHandlers,
    clock,
    async reportError(error, started) {
      await Promise.all(
        [...errorHandlers].map(async (handler) => {
          try {
            await handler(error);
          } catch (failure) {
            log(started, { level: 'error', event: 'on_error_failed', message: 'an onError handler threw', code: errorCode(failure) });
          }
        }),
      );
    },
  };
}
