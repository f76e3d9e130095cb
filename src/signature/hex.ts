const HEX_PAIR = /^(?:[0-9a-fA-F]{2})+$/;

/** Hex digit value by char code, -1 for anything else. */
export const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX_VALUE[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX_VALUE[65 + i] = 10 + i;
  HEX_VALUE[97 + i] = 10 + i;
}

export function isHex(value: string): boolean {
  return HEX_PAIR.test(value);
}

/** Decodes hex the caller has already checked with `isHex`. */
export function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) {
    bytes[i] = (HEX_VALUE[hex.charCodeAt(2 * i)]! << 4) | HEX_VALUE[hex.charCodeAt(2 * i + 1)]!;
  }
  return bytes;
}

const HEX_DIGITS = '0123456789abcdef';

export function bytesToHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    out += HEX_DIGITS[byte >> 4]! + HEX_DIGITS[byte & 15]!;
  }
  return out;
}
