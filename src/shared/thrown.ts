/**
 * The message of whatever was thrown or rejected: anything may be, and a value with no string form
 * (a null-prototype object, a throwing toString or message getter) must not turn reporting one
 * failure into a second, unreported one.
 */
export function describeThrown(value: unknown): string {
  try {
    return value instanceof Error ? String(value.message) : String(value);
  } catch {
    return `a thrown ${typeof value} with no string form`;
  }
}
