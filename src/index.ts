/**
 * rack-webhooks: the runtime-agnostic core. Nothing here imports a `node:` module; node:crypto is
 * reached through process.getBuiltinModule where it exists, Web Crypto everywhere else.
 *
 * Signature verification and signing, the typed event catalog and its parser, the receiver with
 * replay and duplicate protection, the memory dedup store, and rack state.
 *
 * @module rack-webhooks
 */
export { WebhookError, isWebhookError } from './errors.js';
export type { AnyWebhookError, WebhookErrorCode } from './errors.js';
export * from './signature/index.js';
export * from './events/index.js';
export * from './receiver/index.js';
export * from './dedup/index.js';
export * from './state/index.js';
