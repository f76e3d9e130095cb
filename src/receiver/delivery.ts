import type { AnyWebhookEvent } from '../events/types.js';
import type { RawPayload } from '../signature/payload.js';
import type { HeadersInput } from './headers.js';

/*
 * What goes into a receiver and what comes out, on their own: the inbox contract and the steps
 * name them without importing the receiver's options (which name the inbox contract).
 */

/** One delivery as an HTTP framework hands it over. */
export interface Delivery {
  /** The raw body exactly as received. */
  body: RawPayload;
  /** The request's headers in any shape frameworks use (see {@link HeadersInput}); looked up case-insensitively. */
  headers: HeadersInput | null | undefined;
}

/** `'processed'` without an inbox (handlers ran); `'accepted'` with one (the row is committed). */
export type ReceiveOutcome = 'processed' | 'accepted' | 'duplicate' | 'ignored';

/** What `receiver.receive()` resolves with. */
export interface ReceiveResult {
  /** What happened to the delivery. */
  outcome: ReceiveOutcome;
  /** The parsed event (for a duplicate: the copy's own event). */
  event: AnyWebhookEvent;
  /**
   * With an inbox: the stored row's id, for `'accepted'`, `'ignored'`, and a `'duplicate'` that was
   * stored as its own row (different bytes, the same event).
   */
  id?: string;
  /** With an inbox, for a `'duplicate'` stored as its own row: the id of the row it repeats. */
  duplicateOf?: string;
}
