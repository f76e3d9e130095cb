/** Headers as Node, Express, Fastify, fetch (`Headers`) or a plain object hand them over. */
export type HeadersInput =
  | {
      /** Fetch `Headers`' lookup. */
      get(name: string): string | null;
    }
  | Readonly<Record<string, string | readonly string[] | undefined>>
  | Iterable<readonly [string, string]>;

/** Case-insensitive lookup of one header across every shape frameworks use. */
export function getHeader(headers: HeadersInput | null | undefined, name: string): string | readonly string[] | undefined {
  return getLowerCasedHeader(headers, name.toLowerCase());
}

/**
 * `getHeader` for a name already in lower case: the receiver lower-cases its header name once,
 * because a fresh string per delivery also costs V8 a string-table lookup on every property read.
 */
export function getLowerCasedHeader(headers: HeadersInput | null | undefined, lower: string): string | readonly string[] | undefined {
  if (headers === null || headers === undefined) return undefined;
  // Node, Express and Fastify hand over a plain object with lower-cased names: one property read.
  const direct = (headers as Readonly<Record<string, unknown>>)[lower];
  if (typeof direct === 'string') return direct;
  const HeadersClass = (globalThis as { Headers?: abstract new () => unknown }).Headers;
  if (HeadersClass !== undefined && headers instanceof HeadersClass) {
    return (headers as { get(name: string): string | null }).get(lower) ?? undefined;
  }
  // Maps, entry arrays and other iterables: keys may be in any case.
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    const values = [];
    for (const entry of headers as Iterable<unknown>) {
      // Only [name, value] pairs are headers; anything else in the iterable is skipped, not a crash.
      if (Array.isArray(entry) && typeof entry[0] === 'string' && entry[0].toLowerCase() === lower) values.push(entry[1] as string);
    }
    return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
  }
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(lower) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  // Node and most frameworks lower-case header names; anything else is found by scanning.
  if (record[lower] !== undefined) return record[lower];
  for (const key of Object.keys(record)) if (key.toLowerCase() === lower) return record[key];
  return undefined;
}
