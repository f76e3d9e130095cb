/** What Go's encoding/json escapes in every string, beyond what JSON.stringify does. */
const GO_ESCAPES: Readonly<Record<string, string>> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

function sortedKeys(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(byUtf8Bytes)) sorted[key] = (value as Record<string, unknown>)[key];
  return sorted;
}

/** Go sorts map keys by their bytes; UTF-16 order differs only past the BMP, compared here by code point. */
function byUtf8Bytes(a: string, b: string): number {
  const left = [...a].map((c) => c.codePointAt(0)!);
  const right = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(left.length, right.length); i++) if (left[i] !== right[i]) return left[i]! - right[i]!;
  return left.length - right.length;
}

/**
 * An event serialised as a deployed rack's sender writes it (field notes): compact JSON, the
 * envelope's fields in the order given, `data`'s keys sorted (Go marshals a string map sorted),
 * and `<`, `>`, `&` (and U+2028, U+2029) escaped as `\u003c`, `\u003e`, `\u0026`, as Go's
 * encoding/json does. Those characters can only occur inside strings, so escaping the whole text
 * is the same as escaping each string.
 */
export function deployedJson(event: object): string {
  const data = (event as { data?: unknown }).data;
  const shaped = data === undefined ? event : { ...event, data: sortedKeys(data) };
  return JSON.stringify(shaped).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c]!);
}
