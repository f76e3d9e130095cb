// Go takes both micro signs: U+00B5 (µ, the micro sign) and U+03BC (μ, Greek mu).
const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  '\u00b5s': 1e-3,
  '\u03bcs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const PART = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/;
/** Go durations are int64 nanoseconds: about 2,562,047 hours. Go refuses anything longer. */
const MAX_GO_DURATION_MS = 9_223_372_036_854.775;

/**
 * A Go duration string (`5s`, `1m`, `90s`, `1m30s`, `500ms`) in milliseconds, as the rack parses
 * its receiver timeouts; `undefined` when it is not one, or is longer than Go can hold.
 */
export function parseDuration(text: string): number | undefined {
  let rest = text.trim();
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  while (rest !== '') {
    const match = PART.exec(rest);
    if (match === null) return undefined;
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
    rest = rest.slice(match[0].length);
  }
  return total > MAX_GO_DURATION_MS ? undefined : sign * total;
}
