import { verify, verifySync, type VerifyOptions } from '../signature/verify.js';
import type { SignatureHeaderInput } from '../signature/parse-header.js';
import type { RawPayload } from '../signature/payload.js';
import { parseEventWith, type ParseEventOptions } from './parse-event.js';
import { resolveValidators } from './validation.js';
import type { AnyWebhookEvent } from './types.js';

/** Options of {@link constructEvent}: those of {@link verify} and of {@link parseEvent}. */
export type ConstructEventOptions = VerifyOptions & ParseEventOptions;

/**
 * Verifies the signature over the raw body, then parses it: a body whose signature failed is
 * never parsed. Works on every runtime.
 *
 * @param payload - The request body exactly as received: a string, `Buffer`, `Uint8Array` or `ArrayBuffer`.
 * @param header - The `Service-Signature` header value.
 * @param options - The keys and time window of {@link verify}, and `validate` of {@link parseEvent}.
 * @returns The event, known or not.
 * @throws {@link WebhookVerificationError} (401, or 500 for a misconfiguration), then {@link WebhookPayloadError} (400).
 *
 * @example
 * ```ts
 * import { constructEvent, isKnownEvent } from 'rack-webhooks';
 *
 * const event = await constructEvent(rawBody, headers['service-signature'], { secrets: process.env.RACK_WEBHOOK_SECRETS! });
 * if (isKnownEvent(event) && event.action === 'app:budget:auto-shutdown:fired') await page(event.data.app);
 * ```
 */
export async function constructEvent(
  payload: RawPayload,
  header: SignatureHeaderInput,
  options: ConstructEventOptions,
): Promise<AnyWebhookEvent> {
  const validators = resolveValidators(options.validate); // a missing validators import fails before any work
  await verify(payload, header, options);
  return parseEventWith(payload, validators);
}

/**
 * {@link constructEvent} without the promise. Needs `node:crypto` (Node 20.16+, Bun, Deno).
 *
 * @param payload - The request body exactly as received.
 * @param header - The `Service-Signature` header value.
 * @param options - The keys and time window of {@link verify}, and `validate` of {@link parseEvent}.
 * @returns The event, known or not.
 * @throws {@link WebhookVerificationError}, then {@link WebhookPayloadError}.
 */
export function constructEventSync(payload: RawPayload, header: SignatureHeaderInput, options: ConstructEventOptions): AnyWebhookEvent {
  const validators = resolveValidators(options.validate);
  verifySync(payload, header, options);
  return parseEventWith(payload, validators);
}
