/**
 * The checks a deployed rack runs on its `webhook_signing_key` parameter (field notes, "When the
 * rack sends unsigned although a key is set"). Any key failing them turns signing off for every
 * delivery: the rack then sends no signature header at all. One module, used by the receiver's
 * diagnostics (why did an unsigned delivery arrive?) and by the testing kit's emulator (send
 * unsigned exactly when a deployed rack would).
 */

/** Keys a deployed rack signs with at once. */
export const RACK_MAX_KEYS = 4;
/** Longest key a deployed rack accepts, in characters. */
export const RACK_MAX_KEY_LENGTH = 4096;
/** Shortest key a deployed rack accepts: 64 hex characters, 32 bytes. */
export const RACK_MIN_KEY_LENGTH = 64;
/** Bits of Shannon entropy per decoded byte a deployed rack requires of a key. */
export const RACK_MIN_ENTROPY_BITS_PER_BYTE = 3.5;

/**
 * Placeholder values the rack refuses. The field notes do not list the rack's own set; these are
 * the documentation and sample values that pass every other check (most placeholders, such as a
 * repeated `deadbeef`, already fail the entropy check).
 */
const KNOWN_PLACEHOLDERS: ReadonlySet<string> = new Set([
  '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
  '0123456789abcdeffedcba98765432100123456789abcdeffedcba9876543210',
  '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', // SHA-256 of nothing
]);

/** Which check a key failed, in the order the rack runs them. */
export type RackKeyCheck =
  | 'too_many_keys'
  | 'empty_entry'
  | 'too_long'
  | 'odd_length'
  | 'too_short'
  | 'not_lowercase_hex'
  | 'placeholder'
  | 'all_zero'
  | 'repeated_byte'
  | 'low_entropy';

/** One reason the rack would turn signing off. Never holds the key itself. */
export interface RackKeyProblem {
  readonly check: RackKeyCheck;
  /** 0-based position of the key in the list; absent for `too_many_keys`. */
  readonly keyIndex?: number;
  /** One sentence, naming the key by its position (`key #2`) and never quoting it. */
  readonly message: string;
}

/**
 * Splits the parameter value as the rack does (comma-separated, each entry trimmed; empty
 * entries kept, since the rack refuses them) and returns every problem it finds, the count check
 * first. An empty list: the rack signs with these keys.
 */
export function rackKeyProblems(keys: string | readonly string[]): RackKeyProblem[] {
  const list = typeof keys === 'string' ? keys.split(',').map((key) => key.trim()) : keys.map((key) => key.trim());
  const problems: RackKeyProblem[] = [];
  if (list.length > RACK_MAX_KEYS) {
    problems.push({
      check: 'too_many_keys',
      message: `${list.length} keys are set; the rack signs with at most ${RACK_MAX_KEYS}`,
    });
  }
  list.forEach((key, keyIndex) => {
    const problem = keyProblem(key);
    if (problem !== undefined) problems.push({ check: problem.check, keyIndex, message: `key #${keyIndex + 1} ${problem.message}` });
  });
  return problems;
}

function keyProblem(key: string): { check: RackKeyCheck; message: string } | undefined {
  const length = key.length;
  if (length === 0) return { check: 'empty_entry', message: 'is empty (a trailing or doubled comma counts)' };
  if (length > RACK_MAX_KEY_LENGTH)
    return { check: 'too_long', message: `is ${length} characters; the rack takes at most ${RACK_MAX_KEY_LENGTH}` };
  if (length % 2 !== 0) return { check: 'odd_length', message: `is ${length} characters, an odd number; the rack needs whole hex bytes` };
  if (length < RACK_MIN_KEY_LENGTH) {
    return { check: 'too_short', message: `is ${length} characters; the rack needs at least ${RACK_MIN_KEY_LENGTH}` };
  }
  if (!isLowercaseHex(key)) return { check: 'not_lowercase_hex', message: 'is not lowercase hex; the rack takes only [0-9a-f]' };
  if (KNOWN_PLACEHOLDERS.has(key)) return { check: 'placeholder', message: 'is a known placeholder value' };
  const bytes = decodeLowercaseHex(key);
  if (bytes.every((byte) => byte === 0)) return { check: 'all_zero', message: 'decodes to bytes that are all zero' };
  if (bytes.every((byte) => byte === bytes[0])) return { check: 'repeated_byte', message: 'decodes to one byte repeated' };
  const entropy = entropyBitsPerByte(bytes);
  if (entropy < RACK_MIN_ENTROPY_BITS_PER_BYTE) {
    return {
      check: 'low_entropy',
      message: `has ${entropy.toFixed(2)} bits of entropy per byte; the rack needs at least ${RACK_MIN_ENTROPY_BITS_PER_BYTE}`,
    };
  }
  return undefined;
}

/** `[0-9a-f]` only, by char code: a RegExp would keep the key in `RegExp.input`. */
export function isLowercaseHex(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (!((code >= 48 && code <= 57) || (code >= 97 && code <= 102))) return false;
  }
  return value.length > 0;
}

/**
 * A key a deployed rack could sign with, by its shape: even-length lowercase hex of at least 64
 * characters. Only such a key is also tried hex-decoded when `secretEncoding` is not set: a
 * deployed rack sends shorter keys unsigned, so a hex candidate for one could never match.
 */
export function isRackShapedKey(key: string): boolean {
  return key.length >= RACK_MIN_KEY_LENGTH && key.length <= RACK_MAX_KEY_LENGTH && key.length % 2 === 0 && isLowercaseHex(key);
}

function decodeLowercaseHex(hex: string): number[] {
  const bytes: number[] = [];
  for (let i = 0; i < hex.length; i += 2) bytes.push(Number.parseInt(hex.slice(i, i + 2), 16));
  return bytes;
}

/** Shannon entropy of the byte distribution, in bits per byte (0 to 8). */
export function entropyBitsPerByte(bytes: readonly number[]): number {
  const counts = new Map<number, number>();
  for (const byte of bytes) counts.set(byte, (counts.get(byte) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / bytes.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}
