import { getDefaultBackend } from '../../crypto/index.js';
import { WebhookVerificationError, type WebhookVerificationErrorDetails } from '../../signature/errors.js';
import { parseHeaderInternal, type ParsedHeaderInternal } from '../../signature/parse-header.js';
import { toRawPayload } from '../../signature/payload.js';
import type { SigningKey } from '../../signature/secrets.js';
import { resolveNow } from '../../signature/timestamp.js';
import { unsignedError } from '../../signature/unsigned.js';
import { verifyResolved, verifyResolvedSync, type KeyChoice, type VerifiedSignature } from '../../signature/verify.js';
import { getLowerCasedHeader, headerNamesOf, rackSignatureHeaders, type HeadersInput } from '../headers.js';
import type { Delivery } from '../delivery.js';

/** What the receiver verified: which secret, in which form, read from which header. */
export interface ReceivedSignature extends VerifiedSignature {
  /** The header the signature was read from, as the request named it (`Service-Signature`, `Acme-Signature`, ...). */
  headerName: string;
}

/** Step 1: the signature and its time window. */
export interface VerifiedDelivery {
  /** The body as bytes or a string, exactly as it was signed. */
  readonly raw: Uint8Array | string;
  readonly verified: ReceivedSignature;
  /** The signature header as handed over, for storing. */
  readonly header: string | readonly string[] | undefined;
}

export interface VerifyStepOptions {
  /** The receiver's own keys, prepared once when it was created, under `secretEncoding` or as UTF-8 when it is not set. */
  keys: SigningKey[];
  /** Not set: the same secrets hex-decoded, where a key has a deployed rack's shape. */
  alternates: SigningKey[] | undefined;
  encoding: KeyChoice['encoding'];
  tolerance: number;
  /** The header to read first, as configured (or the spec's name), and whether it was configured. */
  headerName: string;
  headerNameSet: boolean;
}

export type VerifyStep = (delivery: Delivery, nowSeconds: number) => VerifiedDelivery | Promise<VerifiedDelivery>;

interface FoundHeader {
  readonly name: string;
  readonly value: string | readonly string[];
  readonly choice: KeyChoice;
}

function isAbsent(value: string | readonly string[] | undefined): value is undefined {
  return value === undefined || value.length === 0;
}

export function createVerifyStep(options: VerifyStepOptions): VerifyStep {
  const { keys, alternates, encoding, tolerance, headerName, headerNameSet } = options;
  const headerKey = headerName.toLowerCase();
  // Two orders of the same candidates, made once: a spec-named header is likelier signed as the
  // spec says, a vendor-named one as a deployed rack does.
  const specFirst: KeyChoice = { keys, encoding, alternates, alternatesFirst: false };
  const deployedFirst: KeyChoice = { keys, encoding, alternates, alternatesFirst: true };
  const sources = keys.map((key) => key.source);

  /** The header to verify: the configured (or spec) name first, one property read on the common path. */
  const findHeader = (headers: HeadersInput | null | undefined): FoundHeader => {
    const direct = getLowerCasedHeader(headers, headerKey);
    if (!isAbsent(direct)) return { name: headerName, value: direct, choice: specFirst };
    const others = rackSignatureHeaders(headers, headerKey);
    if (!headerNameSet && others.length === 1) return { name: others[0]!.name, value: others[0]!.value, choice: deployedFirst };
    const headerNames = headerNamesOf(headers);
    if (!headerNameSet && others.length > 1) {
      const names = others.map((header) => header.name);
      throw new WebhookVerificationError(
        'malformed_header',
        `No ${headerName} header, and ${names.length} headers with a t=…,v1=… value (${names.join(', ')}): refusing to guess; ` +
          `set headerName to the one your rack sends. Headers present: ${headerNames.join(', ')}.`,
        { headerNames },
      );
    }
    throw unsignedError(sources, {
      lookedFor: headerNameSet ? `${headerName} header` : `${headerName} header, nor any *-Signature header with a t=…,v1=… value`,
      headerNames,
      // A t=…,v1=… value under any other name is named, so that a signed delivery is not called unsigned.
      suggestedHeaderName: (others[0] ?? rackSignatureHeaders(headers, headerKey, true)[0])?.name,
    });
  };

  /** Every refusal names the header it read and the headers that were there (names only). */
  const withHeaderFacts = (error: unknown, headers: HeadersInput | null | undefined, name: string | undefined): unknown => {
    if (!(error instanceof WebhookVerificationError) || error.headerNames !== undefined || error.status === 500) return error;
    const headerNames = headerNamesOf(headers);
    const where = name === undefined ? '' : ` Signature read from ${name};`;
    return new WebhookVerificationError(error.code, `${error.message}${where} headers present: ${headerNames.join(', ') || 'none'}.`, {
      // The same facts (an Error's own fields: code, timestamp, the suggestions), plus where it looked.
      ...(error as WebhookVerificationErrorDetails),
      ...(name === undefined ? {} : { headerName: name }),
      headerNames,
    });
  };

  const parse = (headers: HeadersInput | null | undefined): { found: FoundHeader; parsed: ParsedHeaderInternal } => {
    let found: FoundHeader | undefined;
    try {
      found = findHeader(headers);
      return { found, parsed: parseHeaderInternal(found.value) };
    } catch (error) {
      throw withHeaderFacts(error, headers, found?.name);
    }
  };

  const received = (verified: VerifiedSignature, name: string): ReceivedSignature => {
    (verified as ReceivedSignature).headerName = name;
    return verified as ReceivedSignature;
  };

  // On Node the HMAC runs synchronously: no promise for the common case.
  const verifyNow = getDefaultBackend().hmacSync === undefined ? verifyResolved : verifyResolvedSync;
  return ({ body, headers }, nowSeconds) => {
    const raw = toRawPayload(body);
    const { found, parsed } = parse(headers);
    const done = (verified: VerifiedSignature): VerifiedDelivery => ({
      raw,
      verified: received(verified, found.name),
      header: found.value,
    });
    const failed = (error: unknown): never => {
      throw withHeaderFacts(error, headers, found.name);
    };
    let verified: VerifiedSignature | Promise<VerifiedSignature>;
    try {
      verified = verifyNow(found.choice, tolerance, resolveNow(nowSeconds), raw, parsed);
    } catch (error) {
      return failed(error);
    }
    return verified instanceof Promise ? verified.then(done, failed) : done(verified);
  };
}
