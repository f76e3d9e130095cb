/** What `send` delivers: a file sent byte for byte, or a fresh test event built from flags. */
import { WEBHOOK_ACTIONS } from '../generated/catalog.js';
import { ACTION_FIELDS } from '../generated/fields.js';
import type { WebhookAction } from '../events/types.js';
import { createTestEvent } from '../testing/test-event.js';
import { INPUT_LIMIT_BYTES, UsageError, readUserFile } from './args.js';
import { closeMatch, nearest } from './suggest.js';

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

/**
 * `--set status=error`, `--set timestamp=...`, `--set data.app=billing-api`. A field the action does
 * not have is sent anyway (a newer rack may send it) with a note, since it is usually a typo; a value
 * the action cannot carry (`--set status=success` on `release:promote`) is a usage error.
 */
export function eventFromFlags(action: string, sets: readonly string[], warn: (line: string) => void): object {
  assertKnownAction(action);
  const overrides: { status?: string; timestamp?: string; data: Record<string, string>; extraData: Record<string, string> } = {
    data: {},
    extraData: {},
  };
  const sampleFields = Object.keys(ACTION_FIELDS[action]!.data);
  for (const assignment of sets) {
    const equals = assignment.indexOf('=');
    const name = equals === -1 ? assignment : assignment.slice(0, equals);
    const value = assignment.slice(equals + 1);
    if (equals === -1 || !/^(status|timestamp|data\.[^.]+)$/.test(name)) {
      throw new UsageError(`--set ${JSON.stringify(name)}: write status=VALUE, timestamp=VALUE or data.FIELD=VALUE`);
    }
    const field = name.slice('data.'.length);
    if (name === 'status' || name === 'timestamp') overrides[name] = value;
    else if (sampleFields.includes(field)) overrides.data[field] = value;
    else {
      // A typo of a field would send an event with that field missing: refused. A field far from
      // every one (a newer rack's) is sent, in extraData, with a note.
      const intended = closeMatch(field, sampleFields);
      if (intended !== undefined)
        throw new UsageError(
          `--set data.${field}: ${action} has no field ${JSON.stringify(field)}; did you mean data.${intended}? ` +
            '(to send a new field this close to a known one, send a file with --file)',
        );
      warn(`note: data.${field} is not a field of ${action}; sending it anyway`);
      overrides.extraData[field] = value;
    }
  }
  try {
    return createTestEvent(action, overrides as Parameters<typeof createTestEvent>[1]);
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(`--set: ${error.message}`);
    throw error;
  }
}
