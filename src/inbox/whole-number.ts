/**
 * An option that must be a whole number from `min` to `max`: `fallback` when it is left out, a
 * `RangeError` naming it otherwise. `unit` (such as ` of ms`) goes into the message after "number".
 */
export function wholeNumber(name: string, value: unknown, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER, unit = ''): number {
  const resolved = value ?? fallback;
  if (typeof resolved !== 'number' || !Number.isSafeInteger(resolved) || resolved < min || resolved > max)
    throw new RangeError(`${name} must be a whole number${unit} from ${min} to ${max}, got ${String(value)}`);
  return resolved;
}
