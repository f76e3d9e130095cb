import { WebhookVerificationError } from './errors.js';
import { HEX_VALUE } from '../shared/hex.js';
import { MAX_HEADER_LENGTH, MAX_TIMESTAMP_DIGITS, MAX_V1_SIGNATURES } from './limits.js';

/** A `Service-Signature` header as {@link parseSignatureHeader} reads it. */
export interface ParsedSignatureHeader {
  /** The `t` segment: unix seconds of dispatch. */
  timestamp: number;
  /** Every `v1` segment, lowercased hex, in header order. */
  signatures: string[];
}

/**
 * The verifier's view: `t` exactly as the sender wrote it (the HMAC covers those bytes) and where
 * each validated `v1` starts in `source`, so the comparison can decode on the fly without
 * allocating a buffer per signature.
 */
export interface ParsedHeaderInternal {
  timestamp: number;
  timestampText: string;
  source: string;
  signatureOffsets: number[];
}

/** What frameworks hand over for one header: Node gives arrays for repeats, fetch gives null. */
export type SignatureHeaderInput = string | readonly string[] | null | undefined;

const SIGNATURE_HEX_LENGTH = 64;
const COMMA = 44;
const EQUALS = 61;

function isSpace(code: number): boolean {
  return code === 32 || code === 9;
}

function malformed(reason: string): WebhookVerificationError {
  return new WebhookVerificationError(
    'malformed_header',
    `Signature header is malformed: ${reason}. Expected "t=<unix seconds>,v1=<64 hex>[,v1=<64 hex>...]".`,
  );
}

export function headerInputToString(header: SignatureHeaderInput): string {
  if (header === null || header === undefined) return '';
  if (typeof header === 'string') return header;
  if (Array.isArray(header)) {
    // A repeated header is joined, so two `t` segments surface as malformed rather than one copy
    // silently winning.
    return header.filter((part) => typeof part === 'string').join(',');
  }
  throw malformed(`expected a string, got ${typeof header}`);
}

function isSignatureHex(value: string, start: number): boolean {
  for (let i = start; i < start + SIGNATURE_HEX_LENGTH; i++) {
    const code = value.charCodeAt(i);
    if (code >= 128 || HEX_VALUE[code]! < 0) return false;
  }
  return true;
}

/**
 * Constant-time comparison of a digest with the hex signature at `offset` of `source` (already
 * validated by the parser): every byte is visited and differences are OR-ed, with no early exit.
 */
export function digestMatches(digest: Uint8Array | string, source: string, offset: number): boolean {
  if (typeof digest === 'string') return hexDigestMatches(digest, source, offset);
  if (digest.length !== SIGNATURE_HEX_LENGTH / 2) return false;
  let diff = 0;
  for (let i = 0; i < digest.length; i++) {
    const byte = (HEX_VALUE[source.charCodeAt(offset + 2 * i)]! << 4) | HEX_VALUE[source.charCodeAt(offset + 2 * i + 1)]!;
    diff |= digest[i]! ^ byte;
  }
  return diff === 0;
}

/**
 * The same over a lowercase hex digest. OR-ing 0x20 lowercases A-F and leaves digits alone; the
 * parser has already refused any other character, so no two distinct inputs can meet.
 */
function hexDigestMatches(digest: string, source: string, offset: number): boolean {
  if (digest.length !== SIGNATURE_HEX_LENGTH) return false;
  let diff = 0;
  for (let i = 0; i < SIGNATURE_HEX_LENGTH; i++) diff |= (source.charCodeAt(offset + i) | 0x20) ^ digest.charCodeAt(i);
  return diff === 0;
}

function isDigits(value: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const code = value.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return true;
}

/**
 * The form a rack with one key sends, `t=<digits>,v1=<64 hex>` with no spaces, recognised by
 * position alone; anything else takes the general scanner below.
 */
function parseCanonical(value: string): ParsedHeaderInternal | undefined {
  const length = value.length;
  const comma = length - SIGNATURE_HEX_LENGTH - 4;
  if (
    comma < 3 ||
    comma > 2 + MAX_TIMESTAMP_DIGITS ||
    value.charCodeAt(0) !== 116 /* t */ ||
    value.charCodeAt(1) !== EQUALS ||
    value.charCodeAt(comma) !== COMMA ||
    value.charCodeAt(comma + 1) !== 118 /* v */ ||
    value.charCodeAt(comma + 2) !== 49 /* 1 */ ||
    value.charCodeAt(comma + 3) !== EQUALS ||
    !isDigits(value, 2, comma) ||
    !isSignatureHex(value, comma + 4)
  ) {
    return undefined;
  }
  const timestampText = value.slice(2, comma);
  return { timestamp: Number(timestampText), timestampText, source: value, signatureOffsets: [comma + 4] };
}

/**
 * One pass over the header with no intermediate arrays: this runs on every delivery, and a
 * split/trim/regex version cost more than the HMAC of a 1 KiB body.
 */
export function parseHeaderInternal(header: SignatureHeaderInput): ParsedHeaderInternal {
  const value = headerInputToString(header);
  const canonical = parseCanonical(value);
  if (canonical !== undefined) return canonical;
  const length = value.length;
  if (length > MAX_HEADER_LENGTH) {
    throw new WebhookVerificationError(
      'header_too_large',
      `Signature header is ${length} characters long; no rack sends more than ${MAX_HEADER_LENGTH}.`,
    );
  }

  let timestampText: string | undefined;
  const signatureOffsets: number[] = [];
  let segmentNumber = 0;
  let position = 0;
  let sawContent = false;

  while (position <= length) {
    segmentNumber++;
    let segmentEnd = value.indexOf(',', position);
    if (segmentEnd === -1) segmentEnd = length;
    let equals = -1;
    for (let i = position; i < segmentEnd; i++) {
      if (value.charCodeAt(i) === EQUALS) {
        equals = i;
        break;
      }
    }
    let keyStart = position;
    let valueEnd = segmentEnd;
    while (keyStart < segmentEnd && isSpace(value.charCodeAt(keyStart))) keyStart++;
    while (valueEnd > keyStart && isSpace(value.charCodeAt(valueEnd - 1))) valueEnd--;
    if (keyStart === valueEnd && segmentNumber === 1 && segmentEnd === length) break; // blank header
    sawContent = true;
    if (equals === -1) throw malformed(`segment ${segmentNumber} has no "="`);
    let keyEnd = equals;
    while (keyEnd > keyStart && isSpace(value.charCodeAt(keyEnd - 1))) keyEnd--;
    let valueStart = equals + 1;
    while (valueStart < valueEnd && isSpace(value.charCodeAt(valueStart))) valueStart++;
    const keyLength = keyEnd - keyStart;
    const valueLength = valueEnd - valueStart;

    if (keyLength === 1 && value.charCodeAt(keyStart) === 116 /* t */) {
      if (timestampText !== undefined) throw malformed('it has more than one "t" segment');
      if (valueLength === 0 || !isDigits(value, valueStart, valueEnd)) {
        throw malformed('"t" is not a decimal number of seconds');
      }
      if (valueLength > MAX_TIMESTAMP_DIGITS) throw malformed('"t" has too many digits');
      timestampText = value.slice(valueStart, valueEnd);
    } else if (keyLength === 2 && value.charCodeAt(keyStart) === 118 && value.charCodeAt(keyStart + 1) === 49) {
      if (valueLength === 0) throw malformed('a "v1" segment is empty');
      if (valueLength !== SIGNATURE_HEX_LENGTH || !isSignatureHex(value, valueStart)) {
        throw malformed(`a "v1" segment is not ${SIGNATURE_HEX_LENGTH} hex characters (it has ${valueLength} characters)`);
      }
      if (signatureOffsets.length === MAX_V1_SIGNATURES) {
        throw new WebhookVerificationError(
          'too_many_signatures',
          `Signature header has more than ${MAX_V1_SIGNATURES} "v1" segments; the rack signs with at most 4 keys.`,
        );
      }
      signatureOffsets.push(valueStart);
    } else if (keyLength === 0) {
      throw malformed(`segment ${segmentNumber} has no name before "="`);
    }
    // Any other scheme (v0, a future v2) is skipped: receivers must stay compatible.
    position = segmentEnd + 1;
  }

  if (!sawContent) {
    throw new WebhookVerificationError(
      'missing_header',
      'The delivery carries no signature header. Either the rack has no webhook_signing_key set, ' +
        'the rack is older than 3.24.6, the rack has more than 4 keys or a key that fails its own checks ' +
        '(at least 64 lowercase hex characters with enough entropy; it then sends unsigned), or a proxy dropped the header.',
    );
  }
  if (timestampText === undefined) throw malformed('it has no "t" segment');
  const timestamp = Number(timestampText);
  if (signatureOffsets.length === 0) {
    throw new WebhookVerificationError(
      'no_v1_signatures',
      'Signature header has no "v1" segment; this SDK verifies the v1 (HMAC-SHA256) scheme.',
      { timestamp },
    );
  }
  return { timestamp, timestampText, source: value, signatureOffsets };
}

/**
 * Parses a `Service-Signature` header value without verifying anything.
 * Throws `WebhookVerificationError` for every input that is not a well-formed header.
 */
export function parseSignatureHeader(value: string): ParsedSignatureHeader {
  const { timestamp, source, signatureOffsets } = parseHeaderInternal(value);
  return {
    timestamp,
    signatures: signatureOffsets.map((offset) => source.slice(offset, offset + SIGNATURE_HEX_LENGTH).toLowerCase()),
  };
}
