export { WebhookVerificationError, isWebhookVerificationError } from './errors.js';
export type { WebhookVerificationErrorCode, WebhookVerificationErrorDetails } from './errors.js';
export { parseSignatureHeader } from './parse-header.js';
export type { ParsedSignatureHeader, SignatureHeaderInput } from './parse-header.js';
export { verify, verifySync } from './verify.js';
export type { VerifyOptions, VerifiedSignature } from './verify.js';
export { sign, signSync } from './sign.js';
export type { SignOptions } from './sign.js';
export type { RawPayload } from './payload.js';
export type { SecretEncoding, SecretsInput } from './secrets.js';
export {
  DEFAULT_TOLERANCE_SECONDS,
  MAX_HEADER_LENGTH,
  MAX_SIGNING_SECRETS,
  MAX_V1_SIGNATURES,
} from './limits.js';
