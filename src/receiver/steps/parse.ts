import { isKnownEvent } from '../../events/known.js';
import { parseEventWith } from '../../events/parse-event.js';
import type { AnyWebhookEvent } from '../../events/types.js';
import type { EventValidators } from '../../events/validation.js';
import type { RawPayload } from '../../signature/payload.js';
import { matchesPattern } from '../patterns.js';

/** Step 2: the event, and whether the receiver handles it at all. */
export interface ParsedDelivery {
  readonly event: AnyWebhookEvent;
  /** Matched by the `ignore` option: no dedup, no handlers (with an inbox: stored as `'ignored'`). */
  readonly ignored: boolean;
  readonly known: boolean;
}

export type ParseStep = (body: RawPayload) => ParsedDelivery;

export function createParseStep(validators: EventValidators | undefined, ignore: readonly string[]): ParseStep {
  return (body) => {
    const event = parseEventWith(body, validators);
    const ignored = ignore.length > 0 && ignore.some((pattern) => matchesPattern(pattern, event.action));
    return { event, ignored, known: isKnownEvent(event) };
  };
}
