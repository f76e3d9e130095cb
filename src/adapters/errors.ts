import { WebhookMountError } from '../receiver/errors.js';

// Declared with the receiver, whose onError handlers hear it; adapters raise it.
export { WebhookMountError };

export function rawBodyGone(framework: 'express' | 'node'): WebhookMountError {
  const fix =
    framework === 'express'
      ? 'Mount the webhook route before express.json() (app.all(path, webhookMiddleware(receiver))), ' +
        'or mount express.raw({ type: "application/json" }) on it, or keep the bytes with ' +
        'express.json({ verify: (req, res, buf) => { req.rawBody = buf } }).'
      : 'Pass the request to the handler before anything reads its body, or set req.rawBody to the raw bytes.';
  return new WebhookMountError(
    `The request body was already read and parsed by a body parser, so the raw bytes the signature covers are gone. ${fix}`,
  );
}
