/** What `send` delivers: a file sent byte for byte, or a fresh test event built from flags. */
import { WEBHOOK_ACTIONS } from '../generated/catalog.js';
import type { WebhookAction } from '../events/types.js';
import { createTestEvent } from '../testing/test-event.js';
import { INPUT_LIMIT_BYTES, UsageError, readUserFile } from './args.js';
import { nearest } from './suggest.js';

/** JSON text from a file the user named; the error names the file, never its contents. */
export function parseJsonFile(bytes: Buffer, flag: string, path: string): unknown {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${flag} ${JSON.stringify(path)} is not valid JSON`);
  }
}

/**
 * The file as the body, unchanged. The emulator sends text, so the bytes must be UTF-8 for the
 * round trip to be exact (a BOM is kept: `ignoreBOM` stops the decoder from eating it).
 */
export function eventFromFile(path: string, flag: string): string {
  const bytes = readUserFile(path, flag, INPUT_LIMIT_BYTES);
  parseJsonFile(bytes, flag, path);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new UsageError(`${flag} ${JSON.stringify(path)} is not UTF-8, so it cannot be sent byte for byte`);
  }
}

export function assertKnownAction(action: string): asserts action is WebhookAction {
  if ((WEBHOOK_ACTIONS as readonly string[]).includes(action)) return;
  const guesses = nearest(action, WEBHOOK_ACTIONS, 3).join(', ');
  throw new UsageError(`unknown action ${JSON.stringify(action)}; nearest known actions: ${guesses}`);
}

/** `--set status=error`, `--set timestamp=...`, `--set data.app=billing-api`. */
export function eventFromFlags(action: string, sets: readonly string[], warn: (line: string) => void): object {
  assertKnownAction(action);
  const overrides: { status?: string; timestamp?: string; data: Record<string, string> } = { data: {} };
  for (const assignment of sets) {
    const equals = assignment.indexOf('=');
    const name = equals === -1 ? assignment : assignment.slice(0, equals);
    const value = assignment.slice(equals + 1);
    if (equals === -1 || !/^(status|timestamp|data\.[^.]+)$/.test(name)) {
      throw new UsageError(`--set ${JSON.stringify(name)}: write status=VALUE, timestamp=VALUE or data.FIELD=VALUE`);
    }
    if (name === 'status' || name === 'timestamp') overrides[name] = value;
    else overrides.data[name.slice('data.'.length)] = value;
  }
  const sampleFields = Object.keys(createTestEvent(action).data);
  for (const field of Object.keys(overrides.data)) {
    // Unknown fields are legal (a newer rack may send them), but usually a typo: say so, send anyway.
    if (!sampleFields.includes(field)) warn(`note: data.${field} is not a field of ${action}; sending it anyway`);
  }
  return createTestEvent(action, overrides as Parameters<typeof createTestEvent>[1]);
}
