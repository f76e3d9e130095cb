/** The receiver's log records: apart from types.ts so the inbox contract can name them without a cycle. */

/** What a {@link ReceiverLogRecord} is about. */
export type ReceiverLogEvent =
  | 'processed'
  | 'accepted'
  | 'duplicate'
  | 'ignored'
  | 'retried'
  | 'dead'
  | 'replayed'
  | 'inbox_unavailable'
  | 'inbox_reachable'
  | 'inbox_not_migrated'
  | 'inbox_failed'
  | 'inbox_outage'
  | 'inbox_outage_ended'
  | 'inbox_stored_after_refusal'
  | 'rejected'
  | 'handler_failed'
  | 'dedup_unavailable'
  | 'on_error_failed'
  | 'unknown_action_handler'
  | 'raw_body_unavailable';

/**
 * One structured record for the receiver's `logger`. It never holds a secret, a signature or a
 * body, nor a handler's own error message, which could quote anything.
 */
export interface ReceiverLogRecord {
  /** `'error'` for failures that need a person, `'warn'` for refused deliveries, `'info'` otherwise. */
  level: 'info' | 'warn' | 'error';
  /** What happened. */
  event: ReceiverLogEvent;
  /** One line for people. */
  message: string;
  /** The event's action, once the body was parsed. */
  action?: string;
  /** The event's `tick_id`, when it has one. */
  tickId?: string;
  /** The signature's `t`. */
  timestamp?: number;
  /** Which configured secret matched. */
  secretIndex?: number;
  /** How that secret was used: `'utf8'` (the spec) or `'hex'` (a deployed rack). */
  secretEncoding?: 'utf8' | 'hex';
  /** The header the signature was read from, as the request named it. */
  headerName?: string;
  /** On a refusal: the names (never the values) of the headers the request carried. */
  headerNames?: readonly string[];
  /** On a refusal: the header name a `t=…,v1=…` value was found under instead of the configured one. */
  suggestedHeaderName?: string;
  /** On a refusal: the `secretEncoding` under which the signature would have verified. */
  suggestedSecretEncoding?: 'utf8' | 'hex';
  /** The error code, for rejections and failures. */
  code?: string;
  /** With an inbox: the delivery's id, and the attempt a worker record is about. */
  deliveryId?: string;
  /** With an inbox: the attempt (1-based) a worker record is about. */
  attempt?: number;
  /** With an inbox, for a duplicate stored as its own row: the id of the row it repeats. */
  duplicateOf?: string;
  /** `inbox_outage_ended`: how many deliveries waited for the database during the outage. */
  waited?: number;
  /** `inbox_outage_ended`: how many deliveries were refused (503) during it: past the bounds, or refused for good. */
  refused?: number;
  /**
   * Milliseconds the receiver spent on the delivery, or the worker on the attempt; for
   * `inbox_outage_ended`, how long the outage lasted.
   */
  durationMs: number;
}
