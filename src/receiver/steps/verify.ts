import { getDefaultBackend } from '../../crypto/index.js';
import { toRawPayload } from '../../signature/payload.js';
import type { SecretEncoding, SigningKey } from '../../signature/secrets.js';
import { resolveNow } from '../../signature/timestamp.js';
import { verifyResolved, verifyResolvedSync, type VerifiedSignature } from '../../signature/verify.js';
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
  /** The receiver's own keys, prepared once when it was created. */
  keys: SigningKey[];
  encoding: SecretEncoding;
  tolerance: number;
  headerKey: string;
}

export type VerifyStep = (delivery: Delivery, nowSeconds: number) => VerifiedDelivery | Promise<VerifiedDelivery>;

export function createVerifyStep({ keys, encoding, tolerance, headerKey }: VerifyStepOptions): VerifyStep {
  // On Node the HMAC runs synchronously: no promise for the common case.
  if (getDefaultBackend().hmacSync === undefined) {
    return ({ body, headers }, nowSeconds) => {
      const raw = toRawPayload(body);
      const header = getLowerCasedHeader(headers, headerKey);
      return verifyResolved(keys, encoding, tolerance, resolveNow(nowSeconds), raw, header).then((verified) => ({ raw, verified, header }));
    };
  }
  return ({ body, headers }, nowSeconds) => {
    const raw = toRawPayload(body);
    const header = getLowerCasedHeader(headers, headerKey);
    return { raw, verified: verifyResolvedSync(keys, encoding, tolerance, resolveNow(nowSeconds), raw, header), header };
  };
}
