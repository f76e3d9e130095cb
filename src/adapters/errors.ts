import { WebhookError } from '../shared/webhook-error.js';

/**
 * The raw body is gone: a body parser consumed the stream before the webhook route. Raised at
 * once (never a hang, never a 200, never a check over re-serialised JSON), with the fix.
 */
export class WebhookMountError extends WebhookError {
  /** Always `'WebhookMountError'`. */
  override readonly name = 'WebhookMountError';
  /** Always `'raw_body_unavailable'`. */
  readonly code = 'raw_body_unavailable';
  /** The HTTP status adapters answer with: always 500. */
  readonly status = 500;
}

export function rawBodyGone(framework: 'express' | 'node'): WebhookMountError {
  const fix =
    framework === 'express'
      ? 'Mount the webhook route before express.json() (app.all(path, webhookMiddleware(receiver))), ' +
        'or mount express.raw({ type: "application/json" }) on it, or keep the bytes with ' +
        'express.json({ verify: (req, res, buf) => { req.rawBody = buf } }).'
      : 'Pass the request to the handler before anything reads its body, or set req.rawBody to the raw bytes.';
  return new WebhookMountError(
    `rack-webhooks: the request body was already read and parsed by a body parser, so the raw bytes the signature covers are gone. ${fix}`,
  );
}
