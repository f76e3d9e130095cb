/**
 * Bounds an honest rack never reaches. The longest real header is `t=` plus ten digits plus
 * four `,v1=<64 hex>` segments: under 300 characters. The bounds leave room for whitespace
 * and for schemes added later, and are checked before any parsing work is done.
 */
export const MAX_HEADER_LENGTH = 2048;

/** The rack signs with at most 4 keys; twice that leaves room without inviting a HMAC flood. */
export const MAX_V1_SIGNATURES = 8;

/** Keys the rack accepts at once; `sign` refuses more, as the rack does. */
export const MAX_SIGNING_SECRETS = 4;

/** The spec's recommended tolerance window, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Decimal digits in `t`: enough for any unix time in seconds, still a safe integer. */
export const MAX_TIMESTAMP_DIGITS = 15;
