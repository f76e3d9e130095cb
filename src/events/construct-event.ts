import { verify, verifySync, type VerifyOptions } from '../signature/verify.js';
import type { SignatureHeaderInput } from '../signature/parse-header.js';
import type { RawPayload } from '../signature/payload.js';
import { parseEvent, type ParseEventOptions } from './parse-event.js';
import type { AnyWebhookEvent } from './types.js';

export type ConstructEventOptions = VerifyOptions & ParseEventOptions;

/** Verifies the signature over the raw body, then parses it. Works on every runtime. */
export async function constructEvent(
  payload: RawPayload,
  header: SignatureHeaderInput,
  options: ConstructEventOptions,
): Promise<AnyWebhookEvent> {
  await verify(payload, header, options);
  return parseEvent(payload, options);
}

/** `constructEvent` without the promise. Needs node:crypto (Node 20.16+, Bun, Deno). */
export function constructEventSync(
  payload: RawPayload,
  header: SignatureHeaderInput,
  options: ConstructEventOptions,
): AnyWebhookEvent {
  verifySync(payload, header, options);
  return parseEvent(payload, options);
}
