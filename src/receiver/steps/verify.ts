import { getDefaultBackend } from '../../crypto/index.js';
import { toRawPayload } from '../../signature/payload.js';
import type { SecretEncoding, SecretsInput, SigningKey } from '../../signature/secrets.js';
import { resolveNow } from '../../signature/timestamp.js';
import { verify, verifyResolvedSync, type VerifiedSignature } from '../../signature/verify.js';
import { getLowerCasedHeader } from '../headers.js';
import type { Delivery } from '../types.js';

/** Step 1: the signature and its time window. */
export interface VerifiedDelivery {
  /** The body as bytes or a string, exactly as it was signed. */
  readonly raw: Uint8Array | string;
  readonly verified: VerifiedSignature;
  /** The signature header as handed over, for storing. */
  readonly header: string | readonly string[] | undefined;
}

export interface VerifyStepOptions {
  secrets: SecretsInput;
  keys: SigningKey[];
  encoding: SecretEncoding;
  tolerance: number;
  headerKey: string;
}

export type VerifyStep = (delivery: Delivery, nowSeconds: number) => VerifiedDelivery | Promise<VerifiedDelivery>;

export function createVerifyStep({ secrets, keys, encoding, tolerance, headerKey }: VerifyStepOptions): VerifyStep {
  // On Node the HMAC runs synchronously: no promise for the common case.
  if (getDefaultBackend().hmacSync === undefined) {
    return ({ body, headers }, nowSeconds) => {
      const header = getLowerCasedHeader(headers, headerKey);
      return verify(body, header, { secrets, tolerance, secretEncoding: encoding, now: nowSeconds }).then((verified) => ({
        raw: toRawPayload(body),
        verified,
        header,
      }));
    };
  }
  return ({ body, headers }, nowSeconds) => {
    const raw = toRawPayload(body);
    const header = getLowerCasedHeader(headers, headerKey);
    return { raw, verified: verifyResolvedSync(keys, encoding, tolerance, resolveNow(nowSeconds), raw, header), header };
  };
}
