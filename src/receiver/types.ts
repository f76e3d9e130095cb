import type { WebhookDedupError } from '../dedup/errors.js';
import type { DedupStore } from '../dedup/store.js';
import type { AnyWebhookEvent } from '../events/types.js';
import type { ValidateOption } from '../events/validation.js';
import type { SecretEncoding, SecretsInput } from '../signature/secrets.js';
import type { WebhookHandlerError, WebhookMountError } from './errors.js';
import type { WebhookVerificationError } from '../signature/errors.js';
import type { WebhookPayloadError } from '../events/errors.js';
import type { ActionPattern, EventForPattern, EventHandler } from './patterns.js';
import type { DeliveryInbox, HandlerContext } from './inbox-contract.js';
import type { ReceiverLogRecord } from './log-record.js';
import type { Delivery, ReceiveResult } from './delivery.js';

export type { Delivery, ReceiveOutcome, ReceiveResult } from './delivery.js';

export type { ReceiverLogEvent, ReceiverLogRecord } from './log-record.js';

/**
 * Options of {@link createReceiver}. A bad value (no key, a negative tolerance, an invalid
 * pattern) throws at `createReceiver`, not on the first delivery.
 *
 * @typeParam Tx - The inbox's transaction client, which handlers receive; `undefined` without an inbox.
 */
export interface ReceiverOptions<Tx = undefined> {
  /**
   * Store every verified delivery in this inbox (`createInbox` from `rack-webhooks/inbox`) and
   * resolve `'accepted'` once it is committed; handlers then run from `inbox.work(receiver)`.
   * The inbox's unique keys replace `dedup`.
   *
   * @defaultValue none: handlers run inside `receive()`
   */
  inbox?: DeliveryInbox<Tx>;
  /** One key, several, or the rack parameter's `"new,old"` form. */
  secrets: SecretsInput;
  /**
   * Seconds either side of now; `0` = the same second; `Infinity` turns the check off.
   *
   * @defaultValue `300`
   */
  tolerance?: number;
  /**
   * How each key becomes HMAC key bytes: `'utf8'` (the spec) or `'hex'` (deployed racks). Set, it
   * means exactly that.
   *
   * @defaultValue not set: UTF-8, and a key of 64+ lowercase hex characters also hex-decoded
   */
  secretEncoding?: SecretEncoding;
  /**
   * The signature header; deployed racks use a vendor-prefixed name. Case-insensitive. Set, only
   * that header is read.
   *
   * @defaultValue not set: `'Service-Signature'` ({@link DEFAULT_HEADER_NAME}), or when it is absent
   * the one `*-Signature` header whose value has the `t=…,v1=…` shape (several: refused, naming them)
   */
  headerName?: string;
  /**
   * Where delivery keys are claimed; `false` turns deduplication off.
   *
   * @defaultValue a new {@link MemoryDedupStore} per receiver
   */
  dedup?: DedupStore | false;
  /**
   * How long a delivery's dedup keys are held, in seconds (the body key also at least while its
   * `t` can pass the time window). A copy arriving later than this is processed again.
   *
   * @defaultValue `86400` (24 hours)
   */
  eventKeyTtl?: number;
  /**
   * Give the keys back when a handler fails, so a copy of the delivery can still be processed.
   *
   * @defaultValue `true`
   */
  releaseOnError?: boolean;
  /**
   * What to do when the dedup store fails. `'open'` processes the delivery and reports
   * the store error: the rack never retries, so refusing would lose the event for good, while a
   * duplicate is the lesser harm. `'closed'` refuses it with a 503 `WebhookDedupError`.
   *
   * @defaultValue `'open'`
   */
  dedupFailure?: 'open' | 'closed';
  /**
   * Validate known actions against their schemas. `true` needs `import 'rack-webhooks/validate'`
   * (checked when the receiver is created); or pass `validators` from that module.
   *
   * @defaultValue `false`
   */
  validate?: ValidateOption;
  /**
   * Actions or `prefix:*` patterns dropped before dedup and handlers, e.g. `ROUTINE_ACTIONS`.
   *
   * @defaultValue `[]`
   */
  ignore?: readonly string[];
  /**
   * `on()` with a name that is no known action and close to none (a newer rack's action) is
   * accepted with a warning: in the `logger` (`unknown_action_handler`), or with
   * `console.warn` when there is no logger. `false` silences it. A name close to a known action
   * (a typo, another case, a space) always throws a TypeError naming that action.
   *
   * @defaultValue `true`
   */
  warnUnknownActions?: boolean;
  /**
   * Structured records of what the receiver did. Never holds a secret, a signature or a body.
   *
   * @defaultValue none: nothing is logged
   */
  logger?: (record: ReceiverLogRecord) => void;
  /**
   * OpenTelemetry spans and metrics for this receiver's deliveries, emitted as soon as the
   * application registers an SDK (`@opentelemetry/api` 1.x, an optional peer); `false` turns them
   * off. Observed through an inbox or a Node adapter (`/node`, `/express`, `/fastify`); a bare
   * fetch handler without an inbox carries no telemetry code (see the README).
   *
   * @defaultValue `true`
   */
  telemetry?: boolean;
  /**
   * Clock in milliseconds (tests, re-processing stored deliveries).
   *
   * @defaultValue `Date.now`
   */
  now?: () => number;
}

/**
 * An `onError` handler: gets handler failures, store failures when dedup fails open, an adapter's
 * `raw_body_unavailable` (a body parser mounted before the webhook route), and every
 * refused delivery (`WebhookVerificationError`, `WebhookPayloadError`) before `receive()` rejects.
 */
export type ErrorHandler = (
  error: WebhookHandlerError | WebhookDedupError | WebhookVerificationError | WebhookPayloadError | WebhookMountError,
) => unknown;

/**
 * What {@link createReceiver} returns: register typed handlers, then pass each delivery to
 * {@link Receiver.receive}. Every registering method returns the receiver, for chaining.
 *
 * @typeParam Tx - The inbox's transaction client, which handlers receive; `undefined` without an inbox.
 */
export interface Receiver<Tx = undefined> {
  /** The header the signature is read from. */
  readonly headerName: string;
  /** Runs `handler` for an action, a list of actions, or a `prefix:*` pattern; typed exactly. */
  on<const P extends ActionPattern>(pattern: P | readonly P[], handler: EventHandler<EventForPattern<P>, HandlerContext<Tx>>): Receiver<Tx>;
  /** Runs `handler` for every accepted delivery, unknown actions included. */
  onAny(handler: EventHandler<AnyWebhookEvent, HandlerContext<Tx>>): Receiver<Tx>;
  /** Sees handler failures and, when dedup fails open, store failures. Its own errors are contained. */
  onError(handler: ErrorHandler): Receiver<Tx>;
  /** Removes a handler from every pattern it was registered for, `onAny` and `onError` included. */
  off(handler: EventHandler<never, never> | ErrorHandler): Receiver<Tx>;
  /** Removes a handler from one pattern (or list of patterns). */
  off<const P extends ActionPattern>(pattern: P | readonly P[], handler: EventHandler<never, never>): Receiver<Tx>;
  /**
   * Verifies, parses, deduplicates and dispatches one delivery. Resolves with the outcome;
   * rejects with WebhookVerificationError (401), WebhookPayloadError (400), WebhookDedupError (503)
   * or WebhookHandlerError (500). With an inbox it stores instead of dispatching, and rejects with
   * WebhookInboxError (503 `inbox_unavailable`, 500 `inbox_not_migrated`) when it cannot.
   */
  receive(delivery: Delivery, options?: ReceiveOptions): Promise<ReceiveResult>;
  /**
   * Reports a request refused before `receive()` ran: what an adapter answers on its own (a wrong
   * method or media type, a body over the limit or that failed to read, a body a parser consumed).
   * The adapters of this package call it; call it from an adapter of your own. The refusal is
   * counted in the inbox's refusals (with an inbox) and in OpenTelemetry (a `receive` span with
   * `error.type` = the code, and the received counter; see docs/operating.md); a
   * {@link WebhookMountError} also goes to the logger (once per receiver) and to `onError`.
   *
   * @param refusal - The refusal's code (`method_not_allowed`, `unsupported_media_type`,
   * `payload_too_large`, `body_read_failed`...), or the `WebhookMountError` raised.
   * @param options - When the request arrived.
   * @returns Resolves once `onError` handlers have run (at once for a code).
   */
  reportRefusal(refusal: string | WebhookMountError, options?: RefusalOptions): Promise<void>;
}

/** Options of {@link Receiver.reportRefusal}. */
export interface RefusalOptions {
  /**
   * When the request arrived, as `performance.now()`: the refusal's span starts there and its
   * duration is measured from there.
   *
   * @defaultValue now
   */
  startTime?: number;
}

/** Options of one {@link Receiver.receive} call. */
export interface ReceiveOptions {
  /**
   * `'after-handlers'` (default) resolves once every handler has finished. `'before-handlers'`
   * resolves as soon as the delivery is verified, parsed and claimed, and lets the handlers run on:
   * for a rack whose dispatch timeout is shorter than your handlers. Their failures then go to
   * `onError` and the logger (and release the claims), since the response is already sent.
   *
   * @defaultValue `'after-handlers'`
   */
  acknowledge?: 'after-handlers' | 'before-handlers';
}

/**
 * What an adapter needs of a receiver: any receiver, with or without an inbox. `reportRefusal` is
 * optional here so that an object of your own with `receive` and `headerName` still fits.
 */
export type AnyReceiver = Pick<Receiver<unknown>, 'receive' | 'headerName'> & Partial<Pick<Receiver<unknown>, 'reportRefusal'>>;
