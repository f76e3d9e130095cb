import { parseDuration } from './duration.js';
import type { SkipReason } from './types.js';

/** The rack's default and fallback dispatch timeout. */
export const DEFAULT_DISPATCH_TIMEOUT_MS = 30_000;

/**
 * One `webhooks` entry as the rack parses it.
 *
 * @inline
 */
export type ParsedEntry =
  | {
      /** The URL to POST to. */
      url: string;
      /** Its timeout, after the 30 s fallback. */
      timeoutMs: number;
    }
  | {
      /** Why the rack skips it. */
      skipped: SkipReason;
    };

/** What Go's `unicode.IsSpace` calls space, which `strings.TrimSpace` trims (JS's trim differs on U+0085 and U+FEFF). */
function isGoSpace(code: number): boolean {
  return (
    (code >= 0x09 && code <= 0x0d) ||
    code === 0x20 ||
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

/** Go's `strings.TrimSpace`. */
export function goTrimSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isGoSpace(text.charCodeAt(start))) start++;
  while (end > start && isGoSpace(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

/** Go's encoding/json matches a key to a field without regard to (ASCII) case: `URL`, `Url`, `Timeout`. */
function sameField(key: string, field: string): boolean {
  return key.length === field.length && key.replace(/[A-Z]/g, (c) => c.toLowerCase()) === field;
}

/**
 * The JSON form as Go decodes it into `{ url, timeout string }`: keys matched case-insensitively,
 * the last one written wins, `null` leaves a field unset (Go's rule for null), and any other
 * non-string value is a type error, which makes the whole value `invalid_json`.
 */
function decodeJsonEntry(text: string): { url: string; timeout: string | undefined } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  let url = '';
  let timeout: string | undefined;
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    const field = sameField(key, 'url') ? 'url' : sameField(key, 'timeout') ? 'timeout' : undefined;
    if (field === undefined || value === null) continue;
    if (typeof value !== 'string') return undefined;
    if (field === 'url') url = value;
    else timeout = value;
  }
  return { url, timeout };
}

/**
 * One value of the `webhooks` map, parsed the way a deployed rack parses it at dispatch time
 * (field notes): trimmed; empty is `empty_value`; a value starting with `{` is JSON (never a URL,
 * even without a `url`), with `url` and `timeout` read case-insensitively and a non-string
 * `timeout` (or `url`) making it `invalid_json`; the timeout is a Go duration, and an invalid,
 * zero or negative one falls back to 30 s.
 */
export function parseReceiverEntry(value: string): ParsedEntry {
  const trimmed = goTrimSpace(value);
  if (trimmed === '') return { skipped: 'empty_value' };
  if (!trimmed.startsWith('{')) return { url: trimmed, timeoutMs: DEFAULT_DISPATCH_TIMEOUT_MS };
  const decoded = decodeJsonEntry(trimmed);
  if (decoded === undefined) return { skipped: 'invalid_json' };
  const url = goTrimSpace(decoded.url);
  if (url === '') return { skipped: 'empty_url_in_json' };
  const timeout = decoded.timeout === undefined ? undefined : parseDuration(decoded.timeout);
  return { url, timeoutMs: timeout !== undefined && timeout > 0 ? timeout : DEFAULT_DISPATCH_TIMEOUT_MS };
}
