import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const fixturesDir = join(import.meta.dirname, '../fixtures/events');

/** Every fixture file: name, raw text (as a rack would send it) and the parsed JSON. */
export const fixtures = readdirSync(fixturesDir)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .map((name) => {
    const text = readFileSync(join(fixturesDir, name), 'utf8');
    return { name, text, json: JSON.parse(text) as { action: string; status: string; timestamp: string; data: Record<string, unknown> } };
  });

export function fixtureFor(action: string) {
  const found = fixtures.find((f) => f.json.action === action);
  if (found === undefined) throw new Error(`no fixture for ${action}`);
  return found;
}
