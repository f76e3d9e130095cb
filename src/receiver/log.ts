import type { AnyWebhookEvent } from '../events/types.js';
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

export function describeRejection(error: unknown, headerName: string): string {
  const code = errorCode(error);
  if (code === 'missing_header') {
    return `delivery rejected: it carried no ${headerName} header at all (an unsigned delivery: no key on the rack, a rack older than 3.24.6, more than 4 keys, or a proxy dropped it)`;
  }
  return `delivery rejected: ${code}`;
}

/** What a record says about an accepted delivery: never the body, never the signature. */
export function logContext(event: AnyWebhookEvent, verified: VerifiedSignature) {
  const tickId = (event.data as Record<string, unknown>)['tick_id'];
  return {
    action: event.action,
    timestamp: verified.timestamp,
    secretIndex: verified.secretIndex,
    ...(typeof tickId === 'string' ? { tickId } : {}),
  };
}
