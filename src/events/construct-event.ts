import { verify, verifySync, type VerifyOptions } from '../signature/verify.js';
import type { SignatureHeaderInput } from '../signature/parse-header.js';
import type { RawPayload } from '../signature/payload.js';
import { parseEventWith, type ParseEventOptions } from './parse-event.js';
import { resolveValidators } from './validation.js';
import type { AnyWebhookEvent } from './types.js';

export type ConstructEventOptions = VerifyOptions & ParseEventOptions;

/** Verifies the signature over the raw body, then parses it. Works on every runtime. */
export async function constructEvent(
  payload: RawPayload,
  header: SignatureHeaderInput,
  options: ConstructEventOptions,
): Promise<AnyWebhookEvent> {
  const validators = resolveValidators(options.validate); // a missing validators import fails before any work
  await verify(payload, header, options);
  return parseEventWith(payload, validators);
}

/** `constructEvent` without the promise. Needs node:crypto (Node 20.16+, Bun, Deno). */
export function constructEventSync(
  payload: RawPayload,
  header: SignatureHeaderInput,
  options: ConstructEventOptions,
): AnyWebhookEvent {
  const validators = resolveValidators(options.validate);
  verifySync(payload, header, options);
  return parseEventWith(payload, validators);
}
