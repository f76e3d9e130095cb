/**
 * The base of every error the SDK raises for a delivery: `code` says what went wrong in a word a
 * program can switch on, `status` is the HTTP status a receiver should answer with. Adapters
 * answer `{ "error": code }` with that status for any `WebhookError`, and 500 for anything else.
 *
 * Abstract: each subclass fixes its own codes, so `AnyWebhookError` (from `rack-webhooks`) can
 * narrow on `code`. It lives at the bottom of the tree because every layer raises one.
 */
export abstract class WebhookError extends Error {
  /** What went wrong, in a word a program can switch on (`signature_mismatch`, `inbox_unavailable`, ...). */
  abstract readonly code: string;
  /** The HTTP status a receiver should answer with (401, 400, 500, 503, ...). */
  abstract readonly status: number;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
