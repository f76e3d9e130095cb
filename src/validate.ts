/**
 * rack-webhooks/validate: the JSON Schema checks of every known action (precompiled ajv code, no
 * runtime dependency). They sit behind their own import because they are most of the package's
 * bytes, and a receiver that never validates should not ship them to a Worker or load them on
 * every cold start.
 *
 * Importing this module registers the validators, so `validate: true` works anywhere in the
 * program; `validate: validators` passes them explicitly instead.
 */
import { assertValidEvent } from './events/validate.js';
import { registerEventValidators, type EventValidators } from './events/validation.js';

export type { EventValidators, ValidateOption } from './events/validation.js';

/** Pass as `validate: validators` to `parseEvent`, `constructEvent` or `createReceiver`. */
export const validators: EventValidators = Object.freeze({ assertValid: assertValidEvent });

// The registration is this module's one side effect; package.json lists it under "sideEffects" so
// that bundlers keep a bare `import 'rack-webhooks/validate'`.
registerEventValidators(validators);
