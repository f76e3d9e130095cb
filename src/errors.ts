/**
 * The error family in one place: the base class, the union of every error the SDK raises for a
 * delivery, and a guard that narrows to that union. It sits above the folders because the union
 * names a class from each of them (types only: nothing here pulls the inbox or an adapter into
 * a bundle).
 */
import type { WebhookMountError } from './adapters/errors.js';
import type { WebhookDedupError } from './dedup/errors.js';
import type { WebhookPayloadError } from './events/errors.js';
import type { WebhookInboxError } from './database/errors.js';
import type { WebhookHandlerError } from './receiver/errors.js';
import { WebhookError } from './shared/webhook-error.js';
import type { WebhookVerificationError } from './signature/errors.js';

export { WebhookError };

/**
 * Every error the SDK raises for a delivery, keyed on `code`: after `isWebhookError(error)`,
 * `switch (error.code)` narrows to the class that raises that code.
 *
 * | class | codes | status |
 * |---|---|---|
 * | `WebhookVerificationError` | `missing_header`, `signature_mismatch`, ... | 401; 500 for `payload_not_raw`, `no_secrets`, `invalid_secret` |
 * | `WebhookPayloadError` | `invalid_json`, `invalid_event` | 400 |
 * | `WebhookDedupError` | `dedup_unavailable` | 503 |
 * | `WebhookHandlerError` | `handler_failed` | 500 |
 * | `WebhookInboxError` (`rack-webhooks/inbox`) | `inbox_unavailable` (503), `inbox_not_migrated`, `inbox_failed` (500) | |
 * | `WebhookMountError` (adapters) | `raw_body_unavailable` | 500 |
 */
export type AnyWebhookError =
  WebhookVerificationError | WebhookPayloadError | WebhookDedupError | WebhookHandlerError | WebhookInboxError | WebhookMountError;

/** Every `code` an `AnyWebhookError` can carry. */
export type WebhookErrorCode = AnyWebhookError['code'];

/**
 * True for any error the SDK raised for a delivery (any subclass of `WebhookError`), narrowed to
 * `AnyWebhookError` so that `code` discriminates. The same as `error instanceof WebhookError`.
 */
export function isWebhookError(value: unknown): value is AnyWebhookError {
  return value instanceof WebhookError;
}
