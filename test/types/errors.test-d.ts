import { describe, expectTypeOf, it } from 'vitest';
import { WebhookMountError } from '../../src/adapters/web.js';
import {
  WebhookDedupError,
  WebhookError,
  WebhookHandlerError,
  WebhookPayloadError,
  WebhookVerificationError,
  isWebhookError,
  type AnyWebhookError,
  type WebhookErrorCode,
  type WebhookPayloadErrorCode,
  type WebhookVerificationErrorCode,
} from '../../src/index.js';
import { WebhookInboxError, type WebhookInboxErrorCode } from '../../src/inbox.js';

/** What a catch clause holds. */
declare function caught(): unknown;

describe('the error family', () => {
  it('every class extends WebhookError, which carries code and status', () => {
    expectTypeOf<WebhookVerificationError>().toMatchTypeOf<WebhookError>();
    expectTypeOf<WebhookPayloadError>().toMatchTypeOf<WebhookError>();
    expectTypeOf<WebhookDedupError>().toMatchTypeOf<WebhookError>();
    expectTypeOf<WebhookHandlerError>().toMatchTypeOf<WebhookError>();
    expectTypeOf<WebhookInboxError>().toMatchTypeOf<WebhookError>();
    expectTypeOf<WebhookMountError>().toMatchTypeOf<WebhookError>();
    expectTypeOf<WebhookError['code']>().toEqualTypeOf<string>();
    expectTypeOf<WebhookError['status']>().toEqualTypeOf<number>();
    expectTypeOf<WebhookError>().toMatchTypeOf<Error>();
  });

  it('WebhookErrorCode is every code of every class, and nothing else', () => {
    expectTypeOf<WebhookErrorCode>().toEqualTypeOf<
      | WebhookVerificationErrorCode
      | WebhookPayloadErrorCode
      | WebhookInboxErrorCode
      | 'dedup_unavailable'
      | 'handler_failed'
      | 'raw_body_unavailable'
    >();
    expectTypeOf<'internal_error'>().not.toMatchTypeOf<WebhookErrorCode>();
  });

  it('isWebhookError narrows unknown to the union, and a switch on code narrows to one class', () => {
    const error = caught();
    if (!isWebhookError(error)) return;
    expectTypeOf(error).toEqualTypeOf<AnyWebhookError>();
    switch (error.code) {
      case 'signature_mismatch':
      case 'no_secrets':
        expectTypeOf(error).toEqualTypeOf<WebhookVerificationError>();
        expectTypeOf(error.status).toEqualTypeOf<401 | 500>();
        expectTypeOf(error.suggestedSecretEncoding).toEqualTypeOf<'utf8' | 'hex' | undefined>();
        break;
      case 'invalid_event':
        expectTypeOf(error).toEqualTypeOf<WebhookPayloadError>();
        expectTypeOf(error.path).toEqualTypeOf<string>();
        break;
      case 'dedup_unavailable':
        expectTypeOf(error).toEqualTypeOf<WebhookDedupError>();
        expectTypeOf<typeof error.status>().toEqualTypeOf<503>();
        break;
      case 'handler_failed':
        expectTypeOf(error).toEqualTypeOf<WebhookHandlerError>();
        expectTypeOf(error.event.action).toBeString();
        break;
      case 'inbox_unavailable':
        expectTypeOf(error).toEqualTypeOf<WebhookInboxError>();
        expectTypeOf(error.status).toEqualTypeOf<500 | 503>();
        break;
      case 'raw_body_unavailable':
        expectTypeOf(error).toEqualTypeOf<WebhookMountError>();
        break;
      default:
        expectTypeOf(error.code).toEqualTypeOf<
          Exclude<
            WebhookErrorCode,
            | 'signature_mismatch'
            | 'no_secrets'
            | 'invalid_event'
            | 'dedup_unavailable'
            | 'handler_failed'
            | 'inbox_unavailable'
            | 'raw_body_unavailable'
          >
        >();
    }
  });

  it('instanceof the base narrows to WebhookError; instanceof a class to that class', () => {
    const error = caught();
    if (error instanceof WebhookError) {
      expectTypeOf(error.code).toEqualTypeOf<string>();
      expectTypeOf(error.status).toEqualTypeOf<number>();
    }
    if (error instanceof WebhookInboxError) expectTypeOf(error.code).toEqualTypeOf<WebhookInboxErrorCode>();
  });

  it('WebhookError is abstract: only its subclasses are thrown', () => {
    // @ts-expect-error cannot create an instance of an abstract class
    void new WebhookError('x');
  });
});
