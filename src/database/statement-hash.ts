/**
 * A 64-bit hash of a statement's text as 16 hex digits: two 32-bit FNV-1a-style lanes (different
 * offsets and primes) with Math.imul, no BigInt on the hot path. The same in every process.
 */
export function statementHash(text: string): string {
  let low = 0x811c9dc5;
  let high = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    low = Math.imul(low ^ code, 0x01000193);
    high = Math.imul(high ^ code, 0x5bd1e995);
  }
  return `${(high >>> 0).toString(16).padStart(8, '0')}${(low >>> 0).toString(16).padStart(8, '0')}`;
}
