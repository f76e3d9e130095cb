import { errorCode } from './log.js';
import type { ErrorHandler, ReceiverLogRecord } from './types.js';

/** A record to log: its `durationMs` is measured here unless it carries one. */
export type LogRecordToTime = Omit<ReceiverLogRecord, 'durationMs'> & { readonly durationMs?: number };

/** How every step tells the application what happened: the logger option and onError handlers. */
export interface Reporting {
  /** False when no logger was given: steps skip building records. */
  readonly logging: boolean;
  /** `durationMs` runs from `started` on this clock, unless the record carries its own (timed on another clock: the inbox's). */
  log(started: number, record: LogRecordToTime): void;
  reportError(error: Parameters<ErrorHandler>[0], started: number): Promise<void>;
  readonly errorHandlers: Set<ErrorHandler>;
  readonly clock: () => number;
}

export function createReporting(logger: ((record: ReceiverLogRecord) => void) | undefined, clock: () => number): Reporting {
  const errorHandlers = new Set<ErrorHandler>();
  const log: Reporting['log'] = (started, record) => {
    if (logger === undefined) return;
    try {
      // A record's own durationMs, when it carries one, comes last and stands.
      logger({ durationMs: clock() - started, ...record });
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
