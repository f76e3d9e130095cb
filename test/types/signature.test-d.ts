import { describe, expectTypeOf, it } from 'vitest';
import {
  WebhookVerificationError,
  parseSignatureHeader,
  sign,
  signSync,
  verify,
  verifySync,
  type VerifiedSignature,
  type VerifyOptions,
  type WebhookVerificationErrorCode,
} from '../../src/index.js';

describe('signature types', () => {
  it('verify is async and verifySync is not', () => {
    expectTypeOf(verify).returns.toEqualTypeOf<Promise<VerifiedSignature>>();
    expectTypeOf(verifySync).returns.toEqualTypeOf<VerifiedSignature>();
    expectTypeOf(sign).returns.toEqualTypeOf<Promise<string>>();
    expectTypeOf(signSync).returns.toEqualTypeOf<string>();
    expectTypeOf<VerifiedSignature>().toEqualTypeOf<{ timestamp: number; secretIndex: number; secretEncoding: 'utf8' | 'hex' }>();
    expectTypeOf(parseSignatureHeader).returns.toEqualTypeOf<{ timestamp: number; signatures: string[] }>();
  });

  it('takes the raw body forms and the header as frameworks hand it over', () => {
    expectTypeOf(verify).parameter(0).toEqualTypeOf<string | Uint8Array | ArrayBuffer>();
    expectTypeOf(verify).parameter(1).toEqualTypeOf<string | readonly string[] | null | undefined>();
    // @ts-expect-error a parsed object is not a raw payload
    void verify({ action: 'app:create' }, 't=1', { secrets: 'k' });
  });

  it('options are exactly the contract', () => {
    expectTypeOf<VerifyOptions['secrets']>().toEqualTypeOf<string | readonly string[]>();
    expectTypeOf<VerifyOptions['secretEncoding']>().toEqualTypeOf<'utf8' | 'hex' | undefined>();
    // @ts-expect-error secrets is required
    void verify('{}', 't=1', {});
  });

  it('the error has a code union and a status', () => {
    expectTypeOf<WebhookVerificationError['code']>().toEqualTypeOf<WebhookVerificationErrorCode>();
    expectTypeOf<'signature_mismatch'>().toMatchTypeOf<WebhookVerificationErrorCode>();
    // @ts-expect-error not a code
    expectTypeOf<'bad_signature'>().toMatchTypeOf<WebhookVerificationErrorCode>();
    expectTypeOf<WebhookVerificationError['status']>().toEqualTypeOf<401 | 500>();
  });
});
