import { WebhookVerificationError, type WebhookVerificationErrorDetails } from './errors.js';
import { rackKeyProblems } from './rack-key-checks.js';

/** Where the receiver looked, and what the request had instead (names only, never values). */
export interface UnsignedContext {
  /** What was looked for: `'Service-Signature' or any *-Signature header`, or the configured name. */
  readonly lookedFor?: string;
  readonly headerNames?: readonly string[];
  /** A `t=…,v1=…` header under another name than the configured one. */
  readonly suggestedHeaderName?: string | undefined;
}

const RACK_CHECKS =
  'at most 4 keys, no empty entry, each 64 to 4,096 lowercase [0-9a-f] characters of even length, ' +
  'not a placeholder, not all zero nor one byte repeated, 3.5+ bits of entropy per byte';

/**
 * `missing_header` with every cause a rack has for sending unsigned (spec: no key, a rack older
 * than 3.24.6; field notes: any key failing the rack's checks turns signing off), the receiver's
 * own keys checked against those rules first, since that is the cause this receiver can see.
 */
export function unsignedError(sources: readonly string[], context: UnsignedContext = {}): WebhookVerificationError {
  const problems = rackKeyProblems(sources);
  const causes: string[] = [];
  const suggested = context.suggestedHeaderName;
  if (suggested !== undefined) {
    // Left unset, headerName reads a *-Signature header; a header of another name only when named.
    const unset = /-signature$/i.test(suggested) ? ', or leave headerName unset' : '';
    causes.push(`the ${suggested} header carries a t=…,v1=… value; set headerName: '${suggested}'${unset}`);
  }
  for (const problem of problems) {
    causes.push(
      problem.keyIndex === undefined
        ? `your secrets hold ${problem.message}, and the rack sends unsigned with that many`
        : `your ${problem.message}, and the rack sends unsigned with such a key`,
    );
  }
  causes.push(
    'the rack has no webhook_signing_key set',
    'the rack is older than 3.24.6',
    `the rack has more than 4 keys, or a key that fails its own checks, which turns signing off (the checks: ${RACK_CHECKS})`,
    'a proxy dropped the header',
  );
  const where = context.lookedFor === undefined ? 'no signature header' : `no ${context.lookedFor}`;
  const seen = context.headerNames === undefined ? '' : ` (headers present: ${context.headerNames.join(', ') || 'none'})`;
  const verdict =
    context.suggestedHeaderName === undefined
      ? `it was sent unsigned. Possible causes: ${causes.join('; ')}.`
      : `but it is signed: ${causes[0]!}.`;
  // Unset context fields stay undefined on the error, as its other unset facts are.
  const details = { unsignedCauses: causes, rackKeyProblems: problems, ...context } as WebhookVerificationErrorDetails;
  return new WebhookVerificationError('missing_header', `The delivery carries ${where}${seen}: ${verdict}`, details);
}
