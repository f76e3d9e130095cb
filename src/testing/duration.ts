/** Nanoseconds per unit, as Go's `time.ParseDuration` has them; both micro signs, as Go takes both. */
const UNIT_NS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n], // µ, the micro sign
  ['\u03bcs', 1_000n], // μ, Greek mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);
const TWO_63 = 1n << 63n;

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** Go's `leadingInt`: the digits at `start`, or undefined past 2^63 (Go's overflow error). */
function leadingInt(text: string, start: number): { value: bigint; end: number } | undefined {
  let value = 0n;
  let i = start;
  for (; i < text.length && isDigit(text.charCodeAt(i)); i++) {
    if (value > TWO_63 / 10n) return undefined;
    value = value * 10n + BigInt(text.charCodeAt(i) - 48);
    if (value > TWO_63) return undefined;
  }
  return { value, end: i };
}

/** Go's `leadingFraction`: digits past the point; those that would overflow are dropped, not an error. */
function leadingFraction(text: string, start: number): { value: bigint; scale: number; end: number } {
  let value = 0n;
  let scale = 1;
  let overflow = false;
  let i = start;
  for (; i < text.length && isDigit(text.charCodeAt(i)); i++) {
    if (overflow) continue;
    if (value > (TWO_63 - 1n) / 10n) {
      overflow = true;
      continue;
    }
    const next = value * 10n + BigInt(text.charCodeAt(i) - 48);
    if (next > TWO_63) {
      overflow = true;
      continue;
    }
    value = next;
    scale *= 10;
  }
  return { value, scale, end: i };
}

/**
 * A Go duration string in milliseconds, exactly as Go's `time.ParseDuration` reads it (the rack
 * parses receiver timeouts with it): `300ms`, `5s`, `1m30s`, `1.5h`, `-2m`, `0`; `undefined` for
 * anything Go refuses: no unit (`5`), a space anywhere (` 5s`), an unknown unit, or more than an
 * int64 of nanoseconds (about 2,562,047 h).
 */
export function parseDuration(text: string): number | undefined {
  let i = 0;
  let negative = false;
  if (text !== '' && (text[0] === '-' || text[0] === '+')) {
    negative = text[0] === '-';
    i = 1;
  }
  if (text.slice(i) === '0') return 0;
  if (i === text.length) return undefined;
  let total = 0n;
  while (i < text.length) {
    const first = text.charCodeAt(i);
    if (!(first === 46 || isDigit(first))) return undefined;
    const whole = leadingInt(text, i);
    if (whole === undefined) return undefined;
    const hadWhole = whole.end !== i;
    i = whole.end;
    let fraction = { value: 0n, scale: 1, end: i };
    let hadFraction = false;
    if (text[i] === '.') {
      fraction = leadingFraction(text, i + 1);
      hadFraction = fraction.end !== i + 1;
      i = fraction.end;
    }
    if (!hadWhole && !hadFraction) return undefined;
    let unitEnd = i;
    while (unitEnd < text.length && text[unitEnd] !== '.' && !isDigit(text.charCodeAt(unitEnd))) unitEnd++;
    const unit = UNIT_NS.get(text.slice(i, unitEnd));
    if (unit === undefined) return undefined;
    i = unitEnd;
    if (whole.value > TWO_63 / unit) return undefined;
    let value = whole.value * unit;
    if (fraction.value > 0n) {
      // Float, as Go does it, so fractions of an hour round the way the rack's do.
      value += BigInt(Math.trunc(Number(fraction.value) * (Number(unit) / fraction.scale)));
      if (value > TWO_63) return undefined;
    }
    total += value;
    if (total > TWO_63) return undefined;
  }
  if (!negative && total > TWO_63 - 1n) return undefined;
  return (negative ? -Number(total) : Number(total)) / 1e6;
}
