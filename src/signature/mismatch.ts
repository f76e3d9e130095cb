import { WebhookVerificationError } from './errors.js';
import { encodeSecret, type SecretEncoding, type SigningKey } from './secrets.js';

/**
 * A failed verification is usually a configuration slip, not an attack. These are the keys that
 * the common slips would have produced (the other encoding, whitespace around the key, the quotes
 * of a `.env` line left in); if one of them matches, the error says which slip.
 * Only the failure path pays for this.
 */
export interface MismatchCandidate {
  readonly key: SigningKey;
  readonly secretIndex: number;
  readonly slip: 'other_encoding' | 'whitespace' | 'quotes';
}

/** `tried`: the alternates already tried (secretEncoding not set); they are not tried again. */
export function mismatchCandidates(
  keys: readonly SigningKey[],
  encoding: SecretEncoding,
  tried: readonly SigningKey[],
): MismatchCandidate[] {
  const candidates: MismatchCandidate[] = [];
  const other: SecretEncoding = encoding === 'utf8' ? 'hex' : 'utf8';
  keys.forEach((key, secretIndex) => {
    const otherBytes = tried.some((alternate) => alternate.index === key.index) ? undefined : encodeSecret(key.source, other);
    if (otherBytes !== undefined && otherBytes.length > 0) {
      candidates.push({
        key: { source: key.source, bytes: otherBytes, index: key.index, encoding: other },
        secretIndex,
        slip: 'other_encoding',
      });
    }
    // Whitespace around the key (a pasted newline), or the quotes of a .env line left in: the key
    // without them, in the encoding used and (quoted hex keys are not hex) in the other one.
    const cleaned = unquoted(key.source.trim());
    if (cleaned !== key.source && cleaned !== '') {
      const slip = cleaned === key.source.trim() ? 'whitespace' : 'quotes';
      for (const keyEncoding of slip === 'quotes' ? [encoding, other] : [encoding]) {
        const bytes = encodeSecret(cleaned, keyEncoding);
        if (bytes !== undefined)
          candidates.push({ key: { source: cleaned, bytes, index: key.index, encoding: keyEncoding }, secretIndex, slip });
      }
    }
  });
  return candidates;
}

/** The key inside a pair of matching quotes (`"abc"`, `'abc'`), as a `.env` line writes it; else the key. */
const unquoted = (source: string) => source.replace(/^(["'])(.+)\1$/s, '$2');

export function mismatchError(
  keys: readonly SigningKey[],
  signatureCount: number,
  encoding: SecretEncoding,
  timestamp: number,
  matched: MismatchCandidate | undefined,
  bothEncodings = false,
): WebhookVerificationError {
  const base =
    `No v1 signature (of ${signatureCount}) matches any of the ${keys.length} configured secret${keys.length === 1 ? '' : 's'}` +
    (bothEncodings ? ' (tried as UTF-8 text and, where a key is 64+ lowercase hex characters, hex-decoded).' : '.');
  if (matched?.slip === 'other_encoding') {
    const other = encoding === 'utf8' ? 'hex' : 'utf8';
    return new WebhookVerificationError(
      'signature_mismatch',
      `${base} It would verify with secret #${matched.secretIndex + 1} decoded as ${other}: ` +
        `set secretEncoding: '${other}'` +
        (other === 'hex' ? ' (this rack hex-decodes webhook_signing_key).' : '.'),
      { timestamp, suggestedSecretEncoding: other },
    );
  }
  if (matched !== undefined) {
    const quotes = matched.slip === 'quotes';
    return new WebhookVerificationError(
      'signature_mismatch',
      `${base} Secret #${matched.secretIndex + 1} ${quotes ? 'is in quotes (a .env line?)' : 'has whitespace at its start or end (a pasted newline?)'}; ` +
        `without ${quotes ? 'them' : 'it'} the signature verifies. ${quotes ? 'Remove the quotes' : 'Trim the secret'}.`,
      { timestamp },
    );
  }
  const padded = keys.findIndex((key) => unquoted(key.source.trim()) !== key.source);
  const hint =
    padded === -1
      ? " Check that the secret is the rack's current webhook_signing_key and that the body is " +
        'passed exactly as received, not re-serialised JSON.'
      : ` Note: secret #${padded + 1} has whitespace or quotes at its start or end.`;
  return new WebhookVerificationError('signature_mismatch', base + hint, { timestamp });
}
