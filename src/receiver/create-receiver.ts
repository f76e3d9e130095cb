import { defaultBackend } from '../crypto/index.js';
import { WebhookDedupError } from '../dedup/errors.js';
import { MemoryDedupStore, claimAllImmediately } from '../dedup/memory-store.js';
import { claimAll, type DedupClaim, type DedupStore } from '../dedup/store.js';
import { isKnownEvent } from '../events/known.js';
import { parseEvent } from '../events/parse-event.js';
import type { AnyWebhookEvent } from '../events/types.js';
import { resolveKeys } from '../signature/keyring.js';
import { toRawPayload } from '../signature/payload.js';
import { assertSecretEncoding } from '../signature/secrets.js';
import { resolveNow, resolveTolerance } from '../signature/timestamp.js';
import { verify, verifyResolvedSync, type VerifiedSignature, type VerifyOptions } from '../signature/verify.js';
import { dedupClaims } from './dedup-keys.js';
import { WebhookHandlerError } from './errors.js';
import { getLowerCasedHeader } from './headers.js';
import { describeRejection, errorCode, logContext } from './log.js';
import { handlerFailureSummary, runHandlers } from './run-handlers.js';
import { HandlerRegistry, assertPattern, matchesPattern, type EventHandler } from './patterns.js';
import type { Delivery, ErrorHandler, Receiver, ReceiveOptions, ReceiveResult, ReceiverLogRecord, ReceiverOptions } from './types.js';

export const DEFAULT_HEADER_NAME = 'Service-Signature';

export type { ErrorHandler, Receiver, ReceiveOptions } from './types.js';

function positiveSeconds(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw new RangeError(`${name} must be a finite number of seconds > 0, got ${String(value)}`);
  }
  return value;
}

/** A receiver: verify, parse, drop replays and duplicates, run the typed handlers. */
export function createReceiver(options: ReceiverOptions): Receiver {
  const encoding = options.secretEncoding ?? 'utf8';
  assertSecretEncoding(encoding);
  const keys = resolveKeys(options.secrets, encoding); // no_secrets / invalid_secret now, not on the first delivery
  const tolerance = resolveTolerance(options.tolerance);
  const headerName = options.headerName ?? DEFAULT_HEADER_NAME;
  if (typeof headerName !== 'string' || headerName.trim() === '') throw new TypeError('headerName must be a non-empty string');
  const headerKey = headerName.toLowerCase();
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
  const parseOptions = { validate: options.validate === true };

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

  type ClaimState = 'fresh' | 'duplicate' | 'unclaimed';

  const storeFailed = (cause: unknown, event: AnyWebhookEvent, started: number): Promise<ClaimState> => {
    const error = cause instanceof WebhookDedupError ? cause : new WebhookDedupError('The dedup store failed.', { cause });
    if (logging) log(started, {
      level: failClosed ? 'error' : 'warn',
      event: 'dedup_unavailable',
      message: failClosed ? 'dedup store failed; delivery refused (dedupFailure: closed)' : 'dedup store failed; delivery processed without dedup (dedupFailure: open)',
      action: event.action,
      code: error.code,
    });
    if (failClosed) return Promise.reject(error);
    return reportError(error, started).then(() => 'unclaimed');
  };

  /** The memory store answers in this tick; any other store through its promise. */
  const claim = (store: DedupStore, claims: DedupClaim[], event: AnyWebhookEvent, started: number): ClaimState | Promise<ClaimState> => {
    let claimed: boolean | Promise<boolean>;
    try {
      claimed = store instanceof MemoryDedupStore ? claimAllImmediately(store, claims) : claimAll(store, claims);
    } catch (cause) {
      return storeFailed(cause, event, started);
    }
    if (typeof claimed === 'boolean') return claimed ? 'fresh' : 'duplicate';
    return claimed.then((fresh) => (fresh ? 'fresh' : 'duplicate'), (cause: unknown) => storeFailed(cause, event, started));
  };

  const rejected = (error: unknown, started: number): never => {
    if (logging) log(started, { level: 'warn', event: 'rejected', message: describeRejection(error, headerName), code: errorCode(error) });
    throw error;
  };

  /** Failures after the claim: give the keys back, log, tell onError; resolves with the error to throw. */
  const handlersFailed = async (failures: readonly unknown[], run: Run): Promise<WebhookHandlerError> => {
    const error = new WebhookHandlerError(run.event, [...failures]);
    if (releaseOnError && run.claimed === 'fresh') {
      // async: a store whose release throws instead of rejecting must not keep onError from hearing.
      await Promise.allSettled(run.claims.map(async ({ key }) => store!.release(key)));
    }
    // The record names what failed, never the handlers' own messages: those may quote anything.
    if (logging) log(run.started, { level: 'error', event: 'handler_failed', message: handlerFailureSummary(error), code: error.code, ...logContext(run.event, run.verified) });
    await reportError(error, run.started);
    return error;
  };

  interface Run {
    readonly event: AnyWebhookEvent;
    readonly verified: VerifiedSignature;
    readonly started: number;
    readonly acknowledge: ReceiveOptions['acknowledge'];
    claims: DedupClaim[];
    claimed: ClaimState;
  }

  // Each step returns its result directly when it could finish in this tick (the common case on
  // Node: sync crypto, the memory store, synchronous handlers) and a promise only when it could not.

  const dispatch = (run: Run): ReceiveResult | Promise<ReceiveResult> => {
    const { event } = run;
    if (run.claimed === 'duplicate') {
      if (logging) log(run.started, { level: 'info', event: 'duplicate', message: 'duplicate delivery dropped', ...logContext(event, run.verified) });
      return { outcome: 'duplicate', event };
    }
    const known = isKnownEvent(event);
    const result: ReceiveResult = { outcome: known ? 'processed' : 'ignored', event };
    const failures = runHandlers(registry.forAction(event.action, known), event);
    const settled = failures instanceof Promise ? failures.then((settledFailures) => finish(run, result, settledFailures)) : finish(run, result, failures);
    if (run.acknowledge === 'before-handlers' && settled instanceof Promise) {
      settled.catch(() => {}); // failures are reported by handlersFailed; nothing may escape as unhandled
      return result;
    }
    return settled;
  };

  const finish = (run: Run, result: ReceiveResult, failures: readonly unknown[]): ReceiveResult | Promise<ReceiveResult> => {
    if (failures.length === 0) {
      if (logging) {
        const message = result.outcome === 'processed' ? 'delivery processed' : 'unknown action; passed to onAny only';
        log(run.started, { level: 'info', event: result.outcome, message, ...logContext(run.event, run.verified) });
      }
      return result;
    }
    return handlersFailed(failures, run).then((error) => Promise.reject(error));
  };

  const claimThenDispatch = (run: Run, bodySha256: string, nowSeconds: number): ReceiveResult | Promise<ReceiveResult> => {
    run.claims = dedupClaims(bodySha256, run.verified.timestamp, run.event, tolerance, nowSeconds, eventKeyTtl);
    const claimed = claim(store!, run.claims, run.event, run.started);
    if (typeof claimed === 'string') {
      run.claimed = claimed;
      return dispatch(run);
    }
    return claimed.then((state) => {
      run.claimed = state;
      return dispatch(run);
    });
  };

  const afterVerify = (
    body: Delivery['body'],
    raw: Uint8Array | string,
    verified: VerifiedSignature,
    started: number,
    nowSeconds: number,
    acknowledge: ReceiveOptions['acknowledge'],
  ): ReceiveResult | Promise<ReceiveResult> => {
    let event: AnyWebhookEvent;
    try {
      event = parseEvent(body, parseOptions);
    } catch (error) {
      return rejected(error, started);
    }
    if (ignore.length > 0 && ignore.some((pattern) => matchesPattern(pattern, event.action))) {
      if (logging) log(started, { level: 'info', event: 'ignored', message: 'delivery ignored (ignore option)', ...logContext(event, verified) });
      return { outcome: 'ignored', event };
    }
    const run: Run = { event, verified, started, acknowledge, claims: [], claimed: 'unclaimed' };
    if (store === undefined) return dispatch(run);
    if (sha256Sync !== undefined) return claimThenDispatch(run, sha256Sync(raw), nowSeconds);
    return defaultBackend.sha256(raw).then((bodySha256) => claimThenDispatch(run, bodySha256, nowSeconds));
  };

  const receiveNow = ({ body, headers }: Delivery, acknowledge: ReceiveOptions['acknowledge']): ReceiveResult | Promise<ReceiveResult> => {
    const started = clock();
    const nowSeconds = Math.floor(started / 1000);
    if (!syncCrypto) {
      const verifyOptions: VerifyOptions = { secrets, tolerance, secretEncoding: encoding, now: nowSeconds };
      return new Promise<VerifiedSignature>((resolve) => resolve(verify(body, getLowerCasedHeader(headers, headerKey), verifyOptions))).then(
        (verified) => afterVerify(body, toRawPayload(body), verified, started, nowSeconds, acknowledge),
        (error: unknown) => rejected(error, started),
      );
    }
    let raw: Uint8Array | string;
    let verified: VerifiedSignature;
    try {
      raw = toRawPayload(body);
      verified = verifyResolvedSync(keys, encoding, tolerance, resolveNow(nowSeconds), raw, getLowerCasedHeader(headers, headerKey));
    } catch (error) {
      return rejected(error, started);
    }
    return afterVerify(body, raw, verified, started, nowSeconds, acknowledge);
  };

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

    receive(delivery, receiveOptions = {}) {
      if (typeof delivery !== 'object' || delivery === null) {
        return Promise.reject(new TypeError(`receive expects { body, headers }, got ${delivery === null ? 'null' : typeof delivery}`));
      }
      try {
        const result = receiveNow(delivery, receiveOptions.acknowledge);
        return result instanceof Promise ? result : Promise.resolve(result);
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
  return receiver;
}
