import type { AnyWebhookEvent } from '../events/types.js';
import type { WebhookHandlerError } from './errors.js';
import type { EventHandler } from './patterns.js';

export const NO_FAILURES: readonly unknown[] = /* @__PURE__ */ Object.freeze([]);

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/**
 * Runs every handler of one event concurrently and gives back what they threw. When every handler
 * returned without a promise, so does this: a synchronous handler costs no microtask turn.
 */
export function runHandlers(
  handlers: readonly EventHandler<AnyWebhookEvent, unknown>[],
  event: AnyWebhookEvent,
  context: unknown,
): readonly unknown[] | Promise<readonly unknown[]> {
  if (handlers.length === 0) return NO_FAILURES;
  if (handlers.length === 1) {
    let result: unknown;
    try {
      result = handlers[0]!(event, context);
      if (!isThenable(result)) return NO_FAILURES; // inside the try: reading `then` can throw too
    } catch (error) {
      return [error];
    }
    return Promise.resolve(result).then(
      () => NO_FAILURES,
      (error: unknown) => [error],
    );
  }
  return Promise.allSettled(handlers.map((handler) => new Promise((resolve) => resolve(handler(event, context))))).then((results) =>
    results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : [])),
  );
}

/** For the log record: what kinds of errors the handlers threw, never their messages. */
export function handlerFailureSummary(error: WebhookHandlerError): string {
  const kinds = error.errors.map(failureKind);
  return `${kinds.length} handler${kinds.length === 1 ? '' : 's'} failed (${kinds.join(', ')}); the error passed to onError has the details`;
}

function failureKind(failure: unknown): string {
  try {
    return failure instanceof Error ? String(failure.name) : failure === null ? 'null' : typeof failure;
  } catch {
    return 'unknown'; // a throwing `name` getter
  }
}
