/** Longest key a deployed rack accepts, in characters. */
export const RACK_MAX_KEY_LENGTH = 4096;
/** Shortest key a deployed rack accepts: 64 hex characters, 32 bytes. */
export const RACK_MIN_KEY_LENGTH = 64;

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
