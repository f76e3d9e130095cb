/**
 * The checks a deployed rack runs on its `webhook_signing_key` parameter (field notes, "When the
 * rack sends unsigned although a key is set"). Any key failing them turns signing off for every
 * delivery: the rack then sends no signature header at all. One module, used by the receiver's
 * diagnostics (why did an unsigned delivery arrive?) and by the testing kit's emulator (send
 * unsigned exactly when a deployed rack would).
 */

import { RACK_MAX_KEY_LENGTH, RACK_MIN_KEY_LENGTH, isLowercaseHex } from './rack-key-shape.js';

/** Keys a deployed rack signs with at once. */
export const RACK_MAX_KEYS = 4;
/** Bits of Shannon entropy per decoded byte a deployed rack requires of a key. */
export const RACK_MIN_ENTROPY_BITS_PER_BYTE = 3.5;

/**
 * Placeholder values the rack refuses. The field notes do not list the rack's own set; these are
 * sample values that pass every other check (most placeholders, such as a repeated `deadbeef` or
 * `0123456789abcdef`, already fail the entropy check).
 */
const KNOWN_PLACEHOLDERS: ReadonlySet<string> = /* @__PURE__ */ new Set([
  '0123456789abcdeffedcba9876543210'.repeat(2),
  '00112233445566778899aabbccddeeff'.repeat(2),
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
  /** Which check failed, in the rack's order: the first failing check of a key is reported. */
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
      message: `${list.length} keys; the rack signs with at most ${RACK_MAX_KEYS}`,
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
  const bytes = isLowercaseHex(key) ? decodeLowercaseHex(key) : [];
  const entropy = entropyBitsPerByte(bytes);
  // In the rack's order; each message follows "key #n".
  const failed: Array<[boolean, RackKeyCheck, string]> = [
    [length === 0, 'empty_entry', 'is empty (a trailing comma counts)'],
    [length > RACK_MAX_KEY_LENGTH, 'too_long', `is ${length} characters; the rack takes at most ${RACK_MAX_KEY_LENGTH}`],
    [length % 2 !== 0, 'odd_length', `is ${length} characters, an odd number`],
    [length < RACK_MIN_KEY_LENGTH, 'too_short', `is ${length} characters; the rack needs at least ${RACK_MIN_KEY_LENGTH}`],
    [bytes.length === 0, 'not_lowercase_hex', 'is not lowercase hex [0-9a-f]'],
    [KNOWN_PLACEHOLDERS.has(key), 'placeholder', 'is a known placeholder value'],
    [bytes.every((byte) => byte === 0), 'all_zero', 'decodes to bytes that are all zero'],
    [bytes.every((byte) => byte === bytes[0]), 'repeated_byte', 'decodes to one byte repeated'],
    [
      entropy < RACK_MIN_ENTROPY_BITS_PER_BYTE,
      'low_entropy',
      `has ${entropy.toFixed(2)} bits of entropy per byte; the rack needs at least ${RACK_MIN_ENTROPY_BITS_PER_BYTE}`,
    ],
  ];
  const first = failed.find(([fails]) => fails);
  return first === undefined ? undefined : { check: first[1], message: first[2] };
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
