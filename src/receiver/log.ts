import type { AnyWebhookEvent } from '../events/types.js';
import { WebhookVerificationError } from '../signature/errors.js';
import type { VerifiedSignature } from '../signature/verify.js';
import type { ReceiverLogRecord } from './types.js';

/** Log helpers: codes and sentences about an error, never its payload. */
export function errorCode(error: unknown): string {
  try {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? code : error instanceof Error ? String(error.name) : 'unknown_error';
  } catch {
    return 'unknown_error'; // a throwing getter on whatever was thrown
  }
}

/**
 * The rejection in one line. A verification error's message names what was there (header names,
 * the encoding that would have matched, every cause of an unsigned delivery) and never a secret,
 * a signature or the body; a payload error's message may quote the body, so only its code is used.
 */
export function describeRejection(error: unknown): string {
  const code = errorCode(error);
  if (error instanceof WebhookVerificationError) return `delivery rejected (${code}): ${error.message}`;
  return `delivery rejected: ${code}`;
}

/** The fields of `source` named in `keys` that are set: a log record holds no `undefined`. */
export function definedFields(source: object, keys: readonly string[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of keys)
    if ((source as Record<string, unknown>)[key] !== undefined) fields[key] = (source as Record<string, unknown>)[key];
  return fields;
}

/** A verification error's facts that a log record carries: names and choices, never values. */
export const REFUSAL_FACTS = ['timestamp', 'headerName', 'headerNames', 'suggestedHeaderName', 'suggestedSecretEncoding'] as const;

const SIGNATURE_FACTS = ['secretEncoding', 'headerName'] as const;

/** The structured facts of a refusal for the log record. */
export function rejectionFacts(error: unknown): Pick<ReceiverLogRecord, (typeof REFUSAL_FACTS)[number]> {
  return error instanceof WebhookVerificationError ? definedFields(error, REFUSAL_FACTS) : {};
}

/** What a record says about an accepted delivery: never the body, never the signature. */
export function logContext(event: AnyWebhookEvent, verified: VerifiedSignature) {
  const tickId = (event.data as Record<string, unknown>)['tick_id'];
  return {
    action: event.action,
    timestamp: verified.timestamp,
    secretIndex: verified.secretIndex,
    // A receiver's verified facts also name the header (ReceivedSignature); a one-off verify's do not.
    ...(definedFields(verified, SIGNATURE_FACTS) as Pick<ReceiverLogRecord, 'secretEncoding' | 'headerName'>),
    ...(typeof tickId === 'string' ? { tickId } : {}),
  };
}
