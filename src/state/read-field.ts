/**
 * One `data` field as text: a non-empty string, or a number (parseEvent hands integer fields over
 * as numbers). Every part of rack state reads fields this one way, so a release id or a tick id
 * means the same to the phases, the promotes and the anomaly checks.
 */
export function field(data: unknown, key: string): string | undefined {
  const value = (data as Readonly<Record<string, unknown>>)[key];
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;
}
