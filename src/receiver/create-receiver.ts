import { defaultBackend } from '../crypto/index.js';
import { WebhookDedupError } from '../dedup/errors.js';
import { MemoryDedupStore } from '../dedup/memory-store.js';
import { claimAll, type DedupClaim, type DedupStore } from '../dedup/store.js';
import { isKnownEvent } from '../events/known.js';
import { parseEvent } from '../events/parse-event.js';
import type { AnyWebhookEvent } from '../events/types.js';
import { resolveKeys } from '../signature/keyring.js';
import { toRawPayload } from '../signature/payload.js';
import { assertSecretEncoding } from '../signature/secrets.js';
import { resolveTolerance } from '../signature/timestamp.js';
import { verify, verifySync, type VerifiedSignature, type VerifyOptions } from '../signature/verify.js';
import { dedupClaims } from './dedup-keys.js';
import { WebhookHandlerError } from './errors.js';
import { getHeader } from './headers.js';
import { describeRejection, errorCode } from './log.js';
import {
  HandlerRegistry,
  assertPattern,
  matchesPattern,
  type ActionPattern,
  type EventForPattern,
  type EventHandler,
} from './patterns.js';
import type { Delivery, ReceiveResult, ReceiverLogRecord, ReceiverOptions } from './types.js';

export const DEFAULT_HEADER_NAME = 'Service-Signature';

export type ErrorHandler = (error: WebhookHandlerError | WebhookDedupError) => unknown;

export interface Receiver {
  /** The header the signature is read from. */
  readonly headerName: string;
  /** Runs `handler` for an action, a list of actions, or a `prefix:*` pattern; typed exactly. */
  on<const P extends ActionPattern>(pattern: P | readonly P[], handler: EventHandler<EventForPattern<P>>): Receiver;
  /** Runs `handler` for every accepted delivery, unknown actions included. */
  onAny(handler: EventHandler<AnyWebhookEvent>): Receiver;
  /** Sees handler failures and, when dedup fails open, store failures. Its own errors are contained. */
  onError(handler: ErrorHandler): Receiver;
  /** Removes a handler from one pattern, or (without a pattern) from everywhere. */
  off(handler: EventHandler<never> | ErrorHandler): Receiver;
  off<const P extends ActionPattern>(pattern: P | readonly P[], handler: EventHandler<never>): Receiver;
  /**
   * Verifies, parses, deduplicates and dispatches one delivery. Resolves with the outcome;
   * rejects with WebhookVerificationError (401), WebhookPayloadError (400), WebhookDedupError (503)
   * or WebhookHandlerError (500).
   */
  receive(delivery: Delivery, options?: ReceiveOptions): Promise<ReceiveResult>;
}

export interface ReceiveOptions {
  /**
   * `'after-handlers'` (default) resolves once every handler has finished. `'before-handlers'`
   * resolves as soon as the delivery is verified, parsed and claimed, and lets the handlers run on:
   * for a rack whose dispatch timeout is shorter than your handlers. Their failures then go to
   * `onError` and the logger (and release the claims), since the response is already sent.
   */
  acknowledge?: 'after-handlers' | 'before-handlers';
}

function positiveSeconds(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw new RangeError(`${name} must be a finite number of seconds > 0, got ${String(value)}`);
  }
  return value;
}

function logContext(event: AnyWebhookEvent, verified: VerifiedSignature) {
  const tickId = (event.data as Record<string, unknown>)['tick_id'];
  return {
    action: event.action,
    timestamp: verified.timestamp,
    secretIndex: verified.secretIndex,
    ...(typeof tickId === 'string' ? { tickId } : {}),
  };
}

const NO_FAILURES: readonly unknown[] = Object.freeze([]);

function handlerFailureSummary(error: WebhookHandlerError): string {
  const kinds = error.errors.map((failure: unknown) => (failure instanceof Error ? failure.name : typeof failure));
  return `${kinds.length} handler${kinds.length === 1 ? '' : 's'} failed (${kinds.join(', ')}); the error passed to onError has the details`;
}

/** Runs every handler concurrently and returns what they threw; one handler skips the bookkeeping. */
async function runHandlers(handlers: readonly EventHandler<AnyWebhookEvent>[], event: AnyWebhookEvent): Promise<readonly unknown[]> {
  if (handlers.length === 0) return NO_FAILURES;
  if (handlers.length === 1) {
    try {
      const result = handlers[0]!(event);
      if (result instanceof Promise) await result; // a synchronous handler costs no extra tick
      return NO_FAILURES;
    } catch (error) {
      return [error];
    }
  }
  const results = await Promise.allSettled(handlers.map((handler) => new Promise((resolve) => resolve(handler(event)))));
  return results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
}

/** A receiver: verify, parse, drop replays and duplicates, run the typed handlers. */
export function createReceiver(options: ReceiverOptions): Receiver {
  const encoding = options.secretEncoding ?? 'utf8';
  assertSecretEncoding(encoding);
  resolveKeys(options.secrets, encoding); // no_secrets / invalid_secret now, not on the first delivery
  const tolerance = resolveTolerance(options.tolerance);
  const headerName = options.headerName ?? DEFAULT_HEADER_NAME;
  if (typeof headerName !== 'string' || headerName.trim() === '') throw new TypeError('headerName must be a non-empty string');
  const eventKeyTtl = positiveSeconds('eventKeyTtl', options.eventKeyTtl, 86_400);
  const store: DedupStore | undefined = options.dedup === false ? undefined : (options.dedup ?? new MemoryDedupStore());
  const failClosed = options.dedupFailure === 'closed';
  if (options.dedupFailure !== undefined && options.dedupFailure !== 'open' && !failClosed) {
    throw new RangeError(`dedupFailure must be 'open' or 'closed', got ${JSON.stringify(options.dedupFailure)}`);
  }
  const releaseOnError = options.releaseOnError ?? true;
  const clock = options.now ?? Date.now;
  const ignore = options.ignore ?? [];
  ignore.forEach(assertPattern);
  const secrets = options.secrets;
  // On Node everything up to the store runs synchronously: no promise per step.
  const syncCrypto = defaultBackend.hmacSync !== undefined;
  const sha256Sync = defaultBackend.sha256Sync;
  const checkSignature = (body: Delivery['body'], header: ReturnType<typeof getHeader>, nowSeconds: number): VerifiedSignature | Promise<VerifiedSignature> => {
    const verifyOptions: VerifyOptions = { secrets, tolerance, secretEncoding: encoding, now: nowSeconds };
    return syncCrypto ? verifySync(body, header, verifyOptions) : verify(body, header, verifyOptions);
  };

  const registry = new HandlerRegistry();
  const errorHandlers = new Set<ErrorHandler>();

  const logging = options.logger !== undefined;
  const log = (started: number, record: Omit<ReceiverLogRecord, 'durationMs'>): void => {
    if (options.logger === undefined) return;
    try {
      options.logger({ ...record, durationMs: clock() - started });
    } catch {
      // A broken logger must not turn a good delivery into a failure.
    }
  };

  const reportError = async (error: WebhookHandlerError | WebhookDedupError, started: number): Promise<void> => {
    await Promise.all(
      [...errorHandlers].map(async (handler) => {
        try {
          await handler(error);
        } catch (failure) {
          if (logging) log(started, { level: 'error', event: 'on_error_failed', message: 'an onError handler threw', code: errorCode(failure) });
        }
      }),
    );
  };

  async function claim(claims: DedupClaim[], event: AnyWebhookEvent, started: number): Promise<'fresh' | 'duplicate' | 'unclaimed'> {
    if (store === undefined || claims.length === 0) return 'unclaimed';
    try {
      return (await claimAll(store, claims)) ? 'fresh' : 'duplicate';
    } catch (cause) {
      const error = cause instanceof WebhookDedupError ? cause : new WebhookDedupError('The dedup store failed.', { cause });
      if (logging) log(started, {
        level: failClosed ? 'error' : 'warn',
        event: 'dedup_unavailable',
        message: failClosed ? 'dedup store failed; delivery refused (dedupFailure: closed)' : 'dedup store failed; delivery processed without dedup (dedupFailure: open)',
        action: event.action,
        code: error.code,
      });
      if (failClosed) throw error;
      await reportError(error, started);
      return 'unclaimed';
    }
  }

  const receiver: Receiver = {
    headerName,
    on(pattern, handler) {
      for (const one of (Array.isArray(pattern) ? pattern : [pattern]) as string[]) {
        assertPattern(one);
        registry.add(one, handler as EventHandler<never>);
      }
      return receiver;
    },
    onAny(handler) {
      registry.addAny(handler);
      return receiver;
    },
    onError(handler) {
      errorHandlers.add(handler);
      return receiver;
    },
    off(patternOrHandler: unknown, maybeHandler?: EventHandler<never>) {
      if (typeof patternOrHandler === 'function') {
        registry.remove(patternOrHandler as EventHandler<never>);
        errorHandlers.delete(patternOrHandler as ErrorHandler);
      } else {
        const patterns = (Array.isArray(patternOrHandler) ? patternOrHandler : [patternOrHandler]) as string[];
        for (const pattern of patterns) registry.remove(maybeHandler!, pattern);
      }
      return receiver;
    },

    async receive({ body, headers }, receiveOptions = {}) {
      const started = clock();
      const nowSeconds = Math.floor(started / 1000);
      let event: AnyWebhookEvent;
      let verified: VerifiedSignature;
      try {
        const pending = checkSignature(body, getHeader(headers, headerName), nowSeconds);
        verified = pending instanceof Promise ? await pending : pending;
        event = parseEvent(body, { validate: options.validate === true });
      } catch (error) {
        if (logging) log(started, { level: 'warn', event: 'rejected', message: describeRejection(error, headerName), code: errorCode(error) });
        throw error;
      }
      const context = () => logContext(event, verified);

      if (ignore.length > 0 && ignore.some((pattern) => matchesPattern(pattern, event.action))) {
        if (logging) log(started, { level: 'info', event: 'ignored', message: 'delivery ignored (ignore option)', ...context() });
        return { outcome: 'ignored', event };
      }

      let claims: DedupClaim[] = [];
      if (store !== undefined) {
        const raw = toRawPayload(body);
        const bodySha256 = sha256Sync !== undefined ? sha256Sync(raw) : await defaultBackend.sha256(raw);
        claims = dedupClaims(bodySha256, verified.timestamp, event, tolerance, nowSeconds, eventKeyTtl);
      }
      const claimed = claims.length === 0 ? 'unclaimed' : await claim(claims, event, started);
      if (claimed === 'duplicate') {
        if (logging) log(started, { level: 'info', event: 'duplicate', message: 'duplicate delivery dropped', ...context() });
        return { outcome: 'duplicate', event };
      }

      const known = isKnownEvent(event);
      const outcome = known ? 'processed' : 'ignored';
      const dispatch = async (): Promise<WebhookHandlerError | undefined> => {
        const failures = await runHandlers(registry.forAction(event.action, known), event);
        if (failures.length === 0) {
          if (logging) log(started, { level: 'info', event: outcome, message: known ? 'delivery processed' : 'unknown action; passed to onAny only', ...context() });
          return undefined;
        }
        const error = new WebhookHandlerError(event, [...failures]);
        if (releaseOnError && claimed === 'fresh') {
          await Promise.allSettled(claims.map(({ key }) => store!.release(key)));
        }
        // The record names what failed, never the handlers' own messages: those may quote anything.
        if (logging) log(started, { level: 'error', event: 'handler_failed', message: handlerFailureSummary(error), code: error.code, ...context() });
        await reportError(error, started);
        return error;
      };
      if (receiveOptions.acknowledge === 'before-handlers') {
        dispatch().catch(() => {}); // dispatch reports its own failures; nothing may escape as unhandled
        return { outcome, event };
      }
      const error = await dispatch();
      if (error !== undefined) throw error;
      return { outcome, event };
    },
  };
  return receiver;
}
