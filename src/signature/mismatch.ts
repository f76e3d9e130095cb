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
    const trimmed = key.source.trim();
    if (trimmed !== key.source && trimmed !== '') {
      const trimmedBytes = encodeSecret(trimmed, encoding);
      if (trimmedBytes !== undefined) {
        candidates.push({ key: { source: trimmed, bytes: trimmedBytes, index: key.index, encoding }, secretIndex, slip: 'whitespace' });
      }
    }
    const unquoted = withoutQuotes(trimmed);
    if (unquoted !== undefined) {
      for (const keyEncoding of [encoding, other]) {
        const bytes = encodeSecret(unquoted, keyEncoding);
        if (bytes !== undefined)
          candidates.push({ key: { source: unquoted, bytes, index: key.index, encoding: keyEncoding }, secretIndex, slip: 'quotes' });
      }
    }
  });
  return candidates;
}

/** The key inside a pair of matching quotes (`"abc"`, `'abc'`), as a `.env` line writes it; undefined otherwise. */
function withoutQuotes(source: string): string | undefined {
  const match = /^(["'])(.+)\1$/s.exec(source);
  return match === null ? undefined : match[2]!;
}

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
  if (matched?.slip === 'whitespace') {
    return new WebhookVerificationError(
      'signature_mismatch',
      `${base} Secret #${matched.secretIndex + 1} has whitespace at its start or end (a pasted ` +
        'newline?); without it the signature verifies. Trim the secret.',
      { timestamp },
    );
  }
  if (matched?.slip === 'quotes') {
    return new WebhookVerificationError(
      'signature_mismatch',
      `${base} Secret #${matched.secretIndex + 1} is wrapped in quotes (copied from a .env line?); ` +
        'without them the signature verifies. Remove the quotes.',
      { timestamp },
    );
  }
  const padded = keys.findIndex((key) => key.source.trim() !== key.source);
  const quoted = keys.findIndex((key) => withoutQuotes(key.source.trim()) !== undefined);
  const hint =
    padded !== -1
      ? ` Note: secret #${padded + 1} has whitespace at its start or end.`
      : quoted !== -1
        ? ` Note: secret #${quoted + 1} is wrapped in quotes.`
        : " Check that the secret is the rack's current webhook_signing_key and that the body is " +
          'passed exactly as received, not re-serialised JSON.';
  return new WebhookVerificationError('signature_mismatch', base + hint, { timestamp });
}
