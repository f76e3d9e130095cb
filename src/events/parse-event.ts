import { INTEGER_FIELDS } from '../generated/catalog.js';
import { WebhookPayloadError } from './errors.js';
import { isKnownAction } from './known.js';
import type { AnyWebhookEvent, UnknownWebhookEvent } from './types.js';
import { resolveValidators, type EventValidators, type ValidateOption } from './validation.js';

/** Options of {@link parseEvent}, {@link constructEvent} and {@link constructEventSync}. */
export interface ParseEventOptions {
  /**
   * Check a known action against its JSON Schema and report the first failure with its JSON-pointer
   * `path`. Unknown actions are never rejected. `true` needs `import 'rack-webhooks/validate'`
   * somewhere in the program (it registers the validators), or pass `validators` from that module;
   * without either, a `TypeError` says so.
   *
   * @defaultValue `false`
   */
  validate?: ValidateOption;
}

/** Raw JSON text or bytes as received, or a value parsed earlier (a persisted payload). */
export type EventInput = string | Uint8Array | ArrayBuffer | object;

const utf8 = new TextDecoder('utf-8');

const BufferClass = (globalThis as { Buffer?: { isBuffer(value: unknown): boolean } }).Buffer;

/** Node's own decoder when handed a Buffer (faster than TextDecoder there); both replace bad bytes. */
function decodeUtf8(bytes: Uint8Array | ArrayBuffer): string {
  // toString() with no argument is Buffer's UTF-8 fast path; naming the encoding costs a lookup.
  if (BufferClass?.isBuffer(bytes) === true) return (bytes as unknown as { toString(): string }).toString();
  return utf8.decode(bytes);
}
const INTEGER_TEXT = /^-?[0-9]+$/;
// A Map, not the generated object: the action is the sender's text, and an object lookup would
// find Object.prototype's members for "constructor" or "__proto__".
const INTEGER_FIELDS_BY_ACTION = /* @__PURE__ */ new Map(/* @__PURE__ */ Object.entries(INTEGER_FIELDS));

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(input: string | Uint8Array | ArrayBuffer): unknown {
  let text = typeof input === 'string' ? input : decodeUtf8(input);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // JSON.parse refuses a BOM
  try {
    return JSON.parse(text);
  } catch {
    // The engine's message quotes the body; this one does not.
    throw new WebhookPayloadError('invalid_json', `The body is not valid JSON (${text.length} characters).`);
  }
}

function invalid(path: string, reason: string, action?: string): WebhookPayloadError {
  // Only a catalog action is named in the message: any other is the sender's text, of any length
  // and content (the error's `action` still carries it).
  const named = action !== undefined && isKnownAction(action) ? action : 'webhook';
  return new WebhookPayloadError('invalid_event', `Invalid ${named} event: ${path === '' ? 'the payload' : path} ${reason}.`, path, action);
}

/** The envelope every handler relies on, checked even without `validate`. */
function assertEnvelope(value: unknown): asserts value is UnknownWebhookEvent {
  if (!isObject(value)) throw invalid('', 'must be a JSON object');
  const action = value['action'];
  if (typeof action !== 'string' || action === '') throw invalid('/action', 'must be a non-empty string');
  if (typeof value['status'] !== 'string') throw invalid('/status', 'must be a string', action);
  if (typeof value['timestamp'] !== 'string') throw invalid('/timestamp', 'must be a string', action);
  if (!isObject(value['data'])) throw invalid('/data', 'must be an object', action);
}

/**
 * Racks send every `data` value as a string; fields the spec types as integers are handed over
 * as numbers. A value that is not an integer is an error even without `validate`, because the
 * type promises a number.
 */
function withIntegers(event: UnknownWebhookEvent, owned: boolean): UnknownWebhookEvent {
  const fields = INTEGER_FIELDS_BY_ACTION.get(event.action);
  if (fields === undefined) return event;
  let data = event.data;
  for (const field of fields) {
    const value = data[field];
    if (value === undefined || (typeof value === 'number' && Number.isSafeInteger(value))) continue;
    const number = typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(number)) {
      throw invalid(`/data/${field}`, 'must be an integer (a number or a decimal string)', event.action);
    }
    if (!owned && data === event.data) data = { ...data }; // never mutate a caller's object
    data[field] = number;
  }
  return data === event.data ? event : { ...event, data };
}

/**
 * Turns a delivery body into an event, without checking any signature (use `constructEvent` for
 * that). Unknown actions and unknown fields never throw; use `isKnownEvent` to tell them apart.
 *
 * Always checked: a JSON object with a string `action`, `status` and `timestamp` and an object
 * `data`. The integer fields the spec types as numbers arrive as decimal strings and are handed
 * over as numbers. A value parsed earlier is never mutated.
 *
 * @param input - Raw JSON text or bytes as received (a BOM is fine), or a value parsed earlier.
 * @param options - `validate: true` checks a known action against its schema.
 * @returns A known event (narrow it with {@link isKnownEvent}) or an {@link UnknownWebhookEvent}.
 * @throws {@link WebhookPayloadError} `invalid_json` or `invalid_event` (status 400).
 *
 * @example
 * ```ts
 * import { isKnownEvent, parseEvent } from 'rack-webhooks';
 *
 * const event = parseEvent('{"action":"app:budget:per-service-truncated","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{"rack":"r","app":"billing-api","actor":"system","dropped":"3"}}');
 * if (isKnownEvent(event) && event.action === 'app:budget:per-service-truncated') {
 *   console.log(event.data.dropped + 1); // 4: a number, though the rack sends "3"
 * }
 * ```
 */
export function parseEvent(input: EventInput, options: ParseEventOptions = {}): AnyWebhookEvent {
  return parseEventWith(input, resolveValidators(options.validate));
}

/** `parseEvent` with the `validate` option already resolved (receivers resolve it once). */
export function parseEventWith(input: EventInput, validators: EventValidators | undefined): AnyWebhookEvent {
  const fromText = typeof input === 'string' || input instanceof Uint8Array || input instanceof ArrayBuffer;
  const value: unknown = fromText ? parseJson(input) : input;
  assertEnvelope(value);
  if (validators !== undefined && isKnownAction(value.action)) validators.assertValid(value.action, value);
  // The envelope is checked and the integers are numbers; the rest is the rack's word (or the
  // schema's, with `validate`).
  return withIntegers(value, fromText) as AnyWebhookEvent;
}
