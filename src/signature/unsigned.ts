import { WebhookVerificationError, type WebhookVerificationErrorDetails } from './errors.js';
import { rackKeyProblems } from './rack-key-checks.js';

/** Where the receiver looked, and what the request had instead (names only, never values). */
export interface UnsignedContext {
  /** What was looked for: `'Service-Signature' or any *-Signature header`, or the configured name. */
  readonly lookedFor?: string;
  readonly headerNames?: readonly string[];
  /** A `t=…,v1=…` header under another name than the configured one. */
  readonly suggestedHeaderName?: string;
}

const RACK_CHECKS =
  'at most 4 keys, no empty entry (a trailing comma counts), at most 4,096 characters, even length, at least 64 characters, ' +
  'lowercase [0-9a-f] only, not a known placeholder, decoded bytes not all zero nor one repeated byte, at least 3.5 bits of entropy per byte';

/**
 * `missing_header` with every cause a rack has for sending unsigned (spec: no key, a rack older
 * than 3.24.6; field notes: any key failing the rack's checks turns signing off), the receiver's
 * own keys checked against those rules first, since that is the cause this receiver can see.
 */
export function unsignedError(sources: readonly string[], context: UnsignedContext = {}): WebhookVerificationError {
  const problems = rackKeyProblems(sources);
  const causes: string[] = [];
  if (context.suggestedHeaderName !== undefined) {
    causes.push(
      `the signature is under another name: a ${context.suggestedHeaderName} header carries a t=…,v1=… value; ` +
        `set headerName: '${context.suggestedHeaderName}', or leave headerName unset to accept it`,
    );
  }
  for (const problem of problems) {
    causes.push(
      problem.keyIndex === undefined
        ? `your secrets list ${problem.message.replace(' keys are set', ' keys')}, and the rack sends unsigned with that many`
        : `your ${problem.message}, and the rack sends unsigned with such a key`,
    );
  }
  causes.push(
    'the rack has no webhook_signing_key set',
    'the rack is older than 3.24.6 (or was downgraded below it)',
    `the rack has more than 4 keys, or a key that fails its own checks, which turns signing off for every delivery (the checks: ${RACK_CHECKS})`,
    'a proxy between the rack and this receiver dropped the header',
  );
  const where = context.lookedFor === undefined ? 'no signature header' : `no ${context.lookedFor}`;
  const seen = context.headerNames === undefined ? '' : ` (headers present: ${context.headerNames.join(', ') || 'none'})`;
  const verdict =
    context.suggestedHeaderName === undefined
      ? `it was sent unsigned. Possible causes: ${causes.join('; ')}.`
      : `but it is signed: ${causes[0]!}.`;
  const details: WebhookVerificationErrorDetails = {
    unsignedCauses: causes,
    rackKeyProblems: problems,
    ...(context.headerNames === undefined ? {} : { headerNames: context.headerNames }),
    ...(context.suggestedHeaderName === undefined ? {} : { suggestedHeaderName: context.suggestedHeaderName }),
  };
  return new WebhookVerificationError('missing_header', `The delivery carries ${where}${seen}: ${verdict}`, details);
}
