import { MemoryDedupStore } from '../dedup/memory-store.js';
import type { DedupStore } from '../dedup/store.js';
import { parseEventWith } from '../events/parse-event.js';
import { isKnownEvent } from '../events/known.js';
import type { AnyWebhookEvent } from '../events/types.js';
import { resolveValidators } from '../events/validation.js';
import { assertSecretEncoding, hexAlternates, toSigningKeys } from '../signature/secrets.js';
import { resolveTolerance } from '../signature/timestamp.js';
import { checkHandlerName, unknownActionMessage } from './action-names.js';
import type { WebhookMountError } from './errors.js';
import { receiveChannel, refusalChannel, type ReceiveTraceMessage } from './channels.js';
import type { ReceiverRuntime } from './inbox-contract.js';
import { describeRejection, errorCode, rejectionFacts } from './log.js';
import { WebhookError } from '../shared/webhook-error.js';
import { HandlerRegistry, assertPattern, type EventHandler } from './patterns.js';
import { createReporting, type Reporting } from './reporting.js';
import { createClaimStep, type Claimed } from './steps/claim.js';
import { createDispatcher } from './steps/dispatch.js';
import { createParseStep, type ParsedDelivery } from './steps/parse.js';
import { createVerifyStep, type VerifiedDelivery } from './steps/verify.js';
import type { Delivery, ErrorHandler, Receiver, ReceiveOptions, ReceiveResult, ReceiverLogRecord, ReceiverOptions } from './types.js';

/** The header the rack's spec puts the signature in; a receiver's `headerName` by default. */
export const DEFAULT_HEADER_NAME = 'Service-Signature';

export type { ErrorHandler, Receiver, ReceiveOptions } from './types.js';

function positiveSeconds(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw new RangeError(`${name} must be a finite number of seconds > 0, got ${String(value)}`);
  }
  return value;
}

/**
 * A record the application must see even without a logger: the logger's record, or the console.
 * Used for mistakes in the app's own setup (a handler for an unknown action, a body parser first).
 */
function tell(reporting: Reporting, record: Omit<ReceiverLogRecord, 'durationMs'>, started = reporting.clock()): void {
  if (reporting.logging) reporting.log(started, record);
  else console.warn(`[rack-webhooks] ${record.message}`);
}

/**
 * How a receiver hears that an adapter found the body already consumed: one error record per
 * receiver (every delivery fails the same way until the app is fixed), and onError each time.
 */
function mountErrorReport(reporting: Reporting): (error: WebhookMountError) => Promise<void> {
  let logged = false;
  return (error) => {
    const started = reporting.clock();
    if (!logged) tell(reporting, { level: 'error', event: 'raw_body_unavailable', message: error.message, code: error.code }, started);
    logged = true;
    return reporting.reportError(error, started);
  };
}

/**
 * A receiver: verify, parse, then either claim the delivery's keys and dispatch to the typed
 * handlers (the steps under ./steps), or, with an inbox, persist it for a worker to dispatch.
 *
 * Each delivery claims two keys (`body:<sha256 of the body>` and, when the event has a `tick_id`,
 * `event:<action>:<tick_id>:<sha256 of what it says apart from time>`) atomically, so it is handled
 * once however many copies arrive, on one process (the default {@link MemoryDedupStore}) or many
 * (`RedisDedupStore`, or an inbox), while two events that say different things under one `tick_id`
 * both run.
 *
 * @param options - The keys, the dedup store or inbox, and how to handle failures.
 * @returns A receiver: register handlers with `on`, `onAny` and `onError`, then call `receive`.
 * @throws {@link WebhookVerificationError} `no_secrets` or `invalid_secret`, `RangeError` or `TypeError` for another bad option.
 *
 * @example
 * ```ts
 * import { createReceiver, ROUTINE_ACTIONS } from 'rack-webhooks';
 *
 * const receiver = createReceiver({ secrets: process.env.RACK_WEBHOOK_SECRETS!, ignore: ROUTINE_ACTIONS });
 * receiver.on('app:budget:auto-shutdown:fired', (event) => page(`${event.data.app} was shut down`));
 * receiver.on('app:budget:*', (event) => audit(event.action));
 * receiver.onError((error) => report(error));
 *
 * // In any HTTP framework: the raw body and the headers as the framework hands them over.
 * const { outcome } = await receiver.receive({ body: rawBody, headers: req.headers }); // 'processed', 'duplicate' or 'ignored'
 * ```
 */
export function createReceiver<Tx = undefined>(options: ReceiverOptions<Tx>): Receiver<Tx> {
  if (options.secretEncoding !== undefined) assertSecretEncoding(options.secretEncoding);
  const encoding = options.secretEncoding ?? 'utf8';
  // Prepared once and owned by this receiver: no_secrets / invalid_secret now, not on the first
  // delivery, and no module-wide cache of secrets shared with other receivers. Without
  // secretEncoding, rack-shaped keys are also prepared hex-decoded, as deployed racks use them.
  const keys = toSigningKeys(options.secrets, encoding);
  const alternates = options.secretEncoding === undefined ? hexAlternates(keys) : undefined;
  const tolerance = resolveTolerance(options.tolerance);
  const headerNameSet = options.headerName !== undefined;
  const headerName = options.headerName ?? DEFAULT_HEADER_NAME;
  if (typeof headerName !== 'string' || headerName.trim() === '') throw new TypeError('headerName must be a non-empty string');
  const eventKeyTtl = positiveSeconds('eventKeyTtl', options.eventKeyTtl, 86_400);
  const inbox = options.inbox;
  if (typeof inbox?.connectReceiver !== 'function' && inbox !== undefined)
    throw new TypeError('inbox must come from createInbox() (rack-webhooks/inbox)');
  if (inbox !== undefined && options.dedup !== undefined && options.dedup !== false) {
    throw new TypeError("inbox and dedup cannot be combined: the inbox's unique keys are the dedup");
  }
  const store: DedupStore | undefined =
    inbox !== undefined || options.dedup === false ? undefined : (options.dedup ?? new MemoryDedupStore());
  const failClosed = options.dedupFailure === 'closed';
  if (options.dedupFailure !== undefined && options.dedupFailure !== 'open' && !failClosed) {
    throw new RangeError(`dedupFailure must be 'open' or 'closed', got ${JSON.stringify(options.dedupFailure)}`);
  }
  const ignore = options.ignore ?? [];
  ignore.forEach(assertPattern);
  // Resolved now: `validate: true` without rack-webhooks/validate loaded fails here, not per delivery.
  const validators = resolveValidators(options.validate);

  const clock = options.now ?? Date.now;
  const reporting = createReporting(options.logger, clock);
  const registry = new HandlerRegistry();
  const verifyStep = createVerifyStep({ keys, alternates, encoding, tolerance, headerName, headerNameSet });
  const parseStep = createParseStep(validators, ignore);
  const claimStep = store === undefined ? undefined : createClaimStep({ store, tolerance, eventKeyTtl, failClosed, reporting });
  const warnUnknownName =
    options.warnUnknownActions === false
      ? undefined
      : (name: string) =>
          tell(reporting, {
            level: 'warn',
            event: 'unknown_action_handler',
            message: unknownActionMessage(name),
            action: name,
          });
  const reportMountError = mountErrorReport(reporting);
  const dispatcher = createDispatcher({ registry, reporting, releaseOnError: options.releaseOnError ?? true, store });

  // A refusal is logged with what was really there, and onError hears it before receive() rejects.
  const rejected = (error: unknown, started: number): Promise<never> => {
    inbox?.countRefusal?.(errorCode(error));
    if (reporting.logging) {
      reporting.log(started, {
        level: 'warn',
        event: 'rejected',
        message: describeRejection(error),
        code: errorCode(error),
        ...rejectionFacts(error),
      });
    }
    if (reporting.errorHandlers.size === 0 || !(error instanceof WebhookError)) return Promise.reject(error);
    // Only verification and payload errors come here: the refusals.
    return reporting.reportError(error as Parameters<ErrorHandler>[0], started).then(() => Promise.reject(error));
  };

  // Each step returns its result directly when it could finish in this tick (the common case on
  // Node: sync crypto, the memory store, synchronous handlers) and a promise only when it could not.
  const afterVerify = (
    body: Delivery['body'],
    verified: VerifiedDelivery,
    started: number,
    nowSeconds: number,
    acknowledge: ReceiveOptions['acknowledge'],
  ): ReceiveResult | Promise<ReceiveResult> => {
    let parsed: ParsedDelivery;
    try {
      parsed = parseStep(body);
    } catch (error) {
      return rejected(error, started);
    }
    if (persistStep !== undefined) return persistStep(verified, parsed, started);
    const { event } = parsed;
    if (parsed.ignored) {
      if (reporting.logging)
        reporting.log(started, {
          level: 'info',
          event: 'ignored',
          message: 'delivery ignored (ignore option)',
          action: event.action,
          timestamp: verified.verified.timestamp,
          secretIndex: verified.verified.secretIndex,
        });
      return { outcome: 'ignored', event };
    }
    const run = (claimed: Claimed | undefined) =>
      dispatcher.dispatch({ event, known: parsed.known, verified: verified.verified, started, acknowledge, claimed });
    if (claimStep === undefined) return run(undefined);
    const claimed = claimStep(verified, event, nowSeconds, started);
    return claimed instanceof Promise ? claimed.then(run) : run(claimed);
  };

  const receiveNow = (delivery: Delivery, acknowledge: ReceiveOptions['acknowledge']): ReceiveResult | Promise<ReceiveResult> => {
    const started = clock();
    const nowSeconds = Math.floor(started / 1000);
    let verified: VerifiedDelivery | Promise<VerifiedDelivery>;
    try {
      verified = verifyStep(delivery, nowSeconds);
    } catch (error) {
      return rejected(error, started);
    }
    if (!(verified instanceof Promise)) return afterVerify(delivery.body, verified, started, nowSeconds, acknowledge);
    return verified.then(
      (done) => afterVerify(delivery.body, done, started, nowSeconds, acknowledge),
      (error: unknown) => rejected(error, started),
    );
  };

  // What inbox.work(receiver) runs: the same handlers and reporting, fed from stored rows.
  const runtime: ReceiverRuntime = {
    parseStored: (body) => parseEventWith(body, validators),
    runHandlers: (event, context) => dispatcher.dispatchStored(event, isKnownEvent(event), context),
    reportError: reporting.reportError,
    logging: reporting.logging,
    log: (record, started = clock()) => reporting.log(started, record),
    now: clock,
    telemetry: options.telemetry,
  };

  const receiver: Receiver<Tx> = {
    headerName,
    on(pattern, handler) {
      for (const one of (Array.isArray(pattern) ? pattern : [pattern]) as string[]) {
        assertPattern(one);
        checkHandlerName(one, warnUnknownName);
        registry.add(one, handler as EventHandler<never, never>);
      }
      return receiver;
    },
    onAny(handler) {
      registry.addAny(handler as EventHandler<AnyWebhookEvent, unknown>);
      return receiver;
    },
    onError(handler) {
      reporting.errorHandlers.add(handler);
      return receiver;
    },
    off(patternOrHandler: unknown, maybeHandler?: EventHandler<never, never>) {
      if (typeof patternOrHandler === 'function') {
        registry.remove(patternOrHandler as EventHandler<never, never>);
        reporting.errorHandlers.delete(patternOrHandler as ErrorHandler);
      } else {
        const patterns = (Array.isArray(patternOrHandler) ? patternOrHandler : [patternOrHandler]) as string[];
        for (const pattern of patterns) registry.remove(maybeHandler!, pattern);
      }
      return receiver;
    },

    receive(delivery, receiveOptions = {}) {
      const run = (): Promise<ReceiveResult> => {
        if (typeof delivery !== 'object' || delivery === null) {
          return Promise.reject(new TypeError(`receive expects { body, headers }, got ${delivery === null ? 'null' : typeof delivery}`));
        }
        try {
          const result = receiveNow(delivery, receiveOptions.acknowledge);
          return result instanceof Promise ? result : Promise.resolve(result);
        } catch (error) {
          return Promise.reject(error);
        }
      };
      // Observed (an OpenTelemetry subscriber, src/telemetry) only while someone listens.
      if (!traced?.hasSubscribers) return run();
      const message: ReceiveTraceMessage = {};
      return traced.tracePromise(() => (message.runInside ? message.runInside(run) : run()), message);
    },

    reportRefusal(refusal, refusalOptions) {
      const code = typeof refusal === 'string' ? refusal : refusal.code;
      inbox?.countRefusal?.(code);
      if (traced && refusalChannel?.hasSubscribers)
        refusalChannel.publish({ code, startTime: refusalOptions?.startTime ?? performance.now() });
      return typeof refusal === 'string' ? Promise.resolve() : reportMountError(refusal);
    },
  };
  // With an inbox: the receiver hands it what a worker runs, and takes its store step.
  const connection = inbox?.connectReceiver({ inbox, receiver, runtime, customClock: options.now !== undefined });
  const persistStep = connection?.store;
  const traced = options.telemetry === false || connection?.telemetry === false ? undefined : receiveChannel;
  return receiver;
}
