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

/** One header as the request named it. */
export interface NamedHeader {
  readonly name: string;
  readonly value: string | readonly string[];
}

/**
 * Every header of the request, in whatever shape it came, with its name as given. A lookup-only
 * object (`get` and nothing to enumerate) yields nothing. Only refusals and a signature under a
 * vendor name come here: the common path is the direct read of `getLowerCasedHeader`.
 */
export function eachHeader(
  headers: HeadersInput | null | undefined,
  visit: (name: string, value: string | readonly string[]) => void,
): void {
  if (headers === null || headers === undefined || typeof headers !== 'object') return;
  // Fetch Headers, Maps and entry arrays are all iterables of [name, value].
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const entry of headers as Iterable<unknown>) {
      if (Array.isArray(entry) && typeof entry[0] === 'string' && (typeof entry[1] === 'string' || Array.isArray(entry[1]))) {
        visit(entry[0], entry[1] as string | readonly string[]);
      }
    }
    return;
  }
  if (typeof (headers as { get?: unknown }).get === 'function') return;
  const record = headers as Readonly<Record<string, unknown>>;
  for (const name of Object.keys(record)) {
    const value = record[name];
    if (typeof value === 'string' || Array.isArray(value)) visit(name, value as string | readonly string[]);
  }
}

/** The names of the request's headers, never their values, as the request gave them. */
export function headerNamesOf(headers: HeadersInput | null | undefined): string[] {
  const names: string[] = [];
  eachHeader(headers, (name) => names.push(name));
  return names;
}

const SIGNATURE_SUFFIX = '-signature';

/** `t=…` and `v1=…` segments, whatever their order and spacing: the shape of the rack's header. */
function looksLikeRackSignature(value: string | readonly string[]): boolean {
  const text = typeof value === 'string' ? value : value.join(',');
  return /(?:^|,)\s*t\s*=/.test(text) && /(?:^|,)\s*v1\s*=/.test(text);
}

/**
 * Headers named `*-Signature` (any case) other than `except` whose value has the rack's
 * `t=…,v1=…` shape: where a deployed rack puts its signature (`<Vendor>-Signature`). Other
 * schemes under such names (`X-Hub-Signature: sha256=…`) are not candidates. With `anyName`,
 * headers of any name (`X-Webhook-Sig`, `Signature`): never read unless `headerName` names them,
 * but a refusal names them, so that a signed delivery is not called unsigned.
 */
export function rackSignatureHeaders(headers: HeadersInput | null | undefined, except: string, anyName = false): NamedHeader[] {
  const found: NamedHeader[] = [];
  eachHeader(headers, (name, value) => {
    const lower = name.toLowerCase();
    if (lower === except || !looksLikeRackSignature(value)) return;
    if (anyName || (lower !== SIGNATURE_SUFFIX && lower.endsWith(SIGNATURE_SUFFIX))) found.push({ name, value });
  });
  return found;
}
