/**
 * What the core knows of schema validation: the shape of a validator set and where `validate: true`
 * finds one. The validators themselves (about 200 KB of precompiled code) live behind the
 * `rack-webhooks/validate` subpath, so that a receiver that never validates never bundles them:
 * nothing here may import them, or every bundle of `createReceiver` would carry them again.
 */

/** The JSON Schema checks of every known action: `validators` from `rack-webhooks/validate`. */
export interface EventValidators {
  /**
   * Throws a `WebhookPayloadError` (`invalid_event`, with the failing path) when a known action's
   * payload breaks its schema. Unknown actions pass.
   */
  readonly assertValid: (action: string, event: unknown) => void;
}

/**
 * `true` uses the set registered by importing `rack-webhooks/validate`; a set from that module is
 * used as given; `false` (the default) checks the envelope and the integer fields only.
 */
export type ValidateOption = boolean | EventValidators;

/** The one-line fix, in the message of the error a user meets when the validators are not loaded. */
export const MISSING_VALIDATORS_MESSAGE =
  "validate: true needs the schema validators, which are not part of the core (so that receivers that never validate do not bundle them). Add `import 'rack-webhooks/validate';` to the module that sets validate: true, or pass `validate: validators` with `import { validators } from 'rack-webhooks/validate';`.";

// One slot per copy of the core, filled when rack-webhooks/validate is evaluated. It holds code,
// never key material or a body.
let registered: EventValidators | undefined;

/** Called by `rack-webhooks/validate` as it loads, so that `validate: true` means its validators. */
export function registerEventValidators(validators: EventValidators): void {
  registered = validators;
}

function isEventValidators(value: unknown): value is EventValidators {
  return typeof value === 'object' && value !== null && typeof (value as { assertValid?: unknown }).assertValid === 'function';
}

/**
 * The validators a `validate` option stands for, or undefined for none. Receivers call this once
 * when they are created, so a missing import fails at start-up rather than on the first delivery.
 */
export function resolveValidators(option: unknown): EventValidators | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) {
    if (registered === undefined) throw new TypeError(MISSING_VALIDATORS_MESSAGE);
    return registered;
  }
  if (isEventValidators(option)) return option;
  const got = option === null ? 'null' : typeof option;
  throw new TypeError(`validate must be true, false or \`validators\` from rack-webhooks/validate, got ${got}`);
}
