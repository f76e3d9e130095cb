import type { AnyWebhookEvent } from '../events/types.js';
import { WebhookVerificationError } from '../signature/errors.js';
import type { VerifiedSignature } from '../signature/verify.js';

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

/** The structured facts of a refusal for the log record: names and choices, never values. */
export function rejectionFacts(error: unknown) {
  if (!(error instanceof WebhookVerificationError)) return {};
  return {
    ...(error.timestamp === undefined ? {} : { timestamp: error.timestamp }),
    ...(error.headerName === undefined ? {} : { headerName: error.headerName }),
    ...(error.headerNames === undefined ? {} : { headerNames: error.headerNames }),
    ...(error.suggestedHeaderName === undefined ? {} : { suggestedHeaderName: error.suggestedHeaderName }),
    ...(error.suggestedSecretEncoding === undefined ? {} : { suggestedSecretEncoding: error.suggestedSecretEncoding }),
  };
}

/** What a record says about an accepted delivery: never the body, never the signature. */
export function logContext(event: AnyWebhookEvent, verified: VerifiedSignature) {
  const headerName = headerNameOf(verified);
  const tickId = (event.data as Record<string, unknown>)['tick_id'];
  return {
    action: event.action,
    timestamp: verified.timestamp,
    secretIndex: verified.secretIndex,
    secretEncoding: verified.secretEncoding,
    ...(headerName === undefined ? {} : { headerName }),
    ...(typeof tickId === 'string' ? { tickId } : {}),
  };
}

/** A receiver's verified facts also name the header (ReceivedSignature); a one-off verify's do not. */
function headerNameOf(verified: VerifiedSignature): string | undefined {
  const name = (verified as VerifiedSignature & { headerName?: unknown }).headerName;
  return typeof name === 'string' ? name : undefined;
}
