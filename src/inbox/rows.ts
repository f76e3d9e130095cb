import type { DeliveryAttempt, DeliveryState, ReconciledEvidence, StoredDelivery } from './types.js';
import type { Row } from '../database/driver.js';
import { hexToBytes } from '../shared/hex.js';

/**
 * The columns every read selects, cast so the three clients agree: ids and nanoseconds as text
 * (pg and postgres.js give int8 as strings, PGlite as numbers or BigInts).
 */
export const DELIVERY_COLUMNS =
  'id::text AS id, state, action, app, tick_id, event_time, event_ns::text AS event_ns, received_at, signed_at::text AS signed_at, ' +
  'secret_index, attempts, run_at, last_error, done_at, replayed_at, duplicate_of::text AS duplicate_of, origin, evidence::text AS evidence';

/** A timestamp column as a Date, whichever client read it. */
export const toDate = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));

/** The same for a column that may be NULL. */
export const toDateOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : toDate(value));

export function toStoredDelivery(row: Row): StoredDelivery {
  return {
    id: String(row['id']),
    state: row['state'] as DeliveryState,
    action: String(row['action']),
    app: (row['app'] as string | null) ?? null,
    tickId: (row['tick_id'] as string | null) ?? null,
    eventTime: String(row['event_time']),
    eventNanos: BigInt(String(row['event_ns'])),
    receivedAt: toDate(row['received_at']),
    signedAt: Number(row['signed_at']),
    secretIndex: Number(row['secret_index']),
    attempts: Number(row['attempts']),
    runAt: toDateOrNull(row['run_at']),
    lastError: (row['last_error'] as string | null) ?? null,
    doneAt: toDateOrNull(row['done_at']),
    replayedAt: toDateOrNull(row['replayed_at']),
    duplicateOf: (row['duplicate_of'] as string | null) ?? null,
    origin: row['origin'] === 'reconciled' ? 'reconciled' : 'received',
    evidence: evidenceOf(row['evidence']),
  };
}

/** jsonb read as text (the three clients parse jsonb differently): the evidence object, or `null`. */
function evidenceOf(value: unknown): ReconciledEvidence | null {
  if (typeof value !== 'string') return null;
  const parsed = JSON.parse(value) as unknown;
  return typeof parsed === 'object' && parsed !== null ? (parsed as ReconciledEvidence) : null;
}

export function toAttempt(row: Row): DeliveryAttempt {
  return {
    attempt: Number(row['attempt']),
    worker: String(row['worker']),
    startedAt: toDate(row['started_at']),
    finishedAt: toDateOrNull(row['finished_at']),
    outcome: (row['outcome'] as DeliveryAttempt['outcome']) ?? null,
    error: (row['error'] as string | null) ?? null,
    errorClass: (row['error_class'] as string | null | undefined) ?? null,
    errorStack: (row['error_stack'] as string | null | undefined) ?? null,
  };
}

/** A stored stack is cut at 4 KiB (of UTF-16 units, near enough): where it failed, not a dump. */
export const MAX_STACK_LENGTH = 4096;
const MAX_CLASS_LENGTH = 200;

/**
 * What a failure was, beyond its message: the class it was thrown as and its stack, exactly as
 * the handler threw them (nothing of the delivery is added), each bounded. Anything thrown that is
 * not an Error has neither.
 */
export function failureDetail(thrown: unknown): { errorClass: string | null; errorStack: string | null } {
  if (!(thrown instanceof Error)) return { errorClass: null, errorStack: null };
  let errorClass: string | null = null;
  let errorStack: string | null = null;
  try {
    const name = thrown.constructor?.name || thrown.name;
    errorClass = typeof name === 'string' && name !== '' ? name.slice(0, MAX_CLASS_LENGTH) : null;
  } catch {
    // a throwing getter: no class then
  }
  try {
    const stack = thrown.stack;
    errorStack = typeof stack === 'string' && stack !== '' ? boundError(stack, MAX_STACK_LENGTH) : null;
  } catch {
    // likewise
  }
  return { errorClass, errorStack };
}

/** bytea as a Uint8Array whatever the client gave (Buffer, Uint8Array, or `\x` hex text). */
export function toBytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string' && value.startsWith('\\x')) return hexToBytes(value.slice(2));
  throw new TypeError(`unexpected bytea value of type ${typeof value}`);
}

/** Errors stored in the table are bounded: a handler's message may be anything, of any length. */
export const MAX_ERROR_LENGTH = 2000;

export function boundError(text: string, max = MAX_ERROR_LENGTH): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
