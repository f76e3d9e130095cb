/**
 * The run-time half of `createTestEvent`'s promise: the types reject an unknown field or a wrong
 * value in TypeScript, and these checks reject the same in JavaScript (or behind a cast), so a
 * receiver's test never passes on an event no rack would send without saying so.
 */
import { ACTION_FIELDS, type FieldKind } from '../generated/fields.js';
import { closeMatch } from '../shared/suggest.js';

const OPTIONS = ['status', 'timestamp', 'data', 'extraData'] as const;
const INTEGER = /^-?[0-9]+$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${String(value)}`;
  return typeof value === 'object' ? 'an object' : typeof value;
}

function didYouMean(name: string, candidates: readonly string[]): string {
  const match = closeMatch(name, candidates);
  return match === undefined ? '' : ` (did you mean ${JSON.stringify(match)}?)`;
}

const list = (values: readonly string[]) => values.map((value) => JSON.stringify(value)).join(', ');

/** A data value as the rack sends it: a string, and for a known field, of that field's kind. */
function checkValue(fail: (message: string) => never, path: string, value: unknown, kind: FieldKind): void {
  if (typeof value !== 'string') {
    const hint = typeof value === 'number' || typeof value === 'boolean' ? `: pass "${String(value)}"` : '';
    fail(`${path} must be a string, as the rack sends every data value; got ${describeValue(value)}${hint}`);
  }
  if (kind === 'integer' && !INTEGER.test(value)) {
    fail(`${path} must be a decimal integer string such as "3" (the spec types it as an integer); got ${describeValue(value)}`);
  }
  if (typeof kind !== 'string' && !kind.includes(value)) fail(`${path} must be one of ${list(kind)}; got ${describeValue(value)}`);
}

function checkData(fail: (message: string) => never, action: string, data: unknown, fields: { readonly [field: string]: FieldKind }): void {
  if (!isPlainObject(data)) fail(`data must be an object of ${action}'s fields; got ${describeValue(data)}`);
  const known = Object.keys(fields);
  for (const [field, value] of Object.entries(data)) {
    const kind = Object.hasOwn(fields, field) ? fields[field] : undefined; // not `constructor` from the prototype
    if (kind === undefined) {
      fail(
        `data.${field} is not a field of ${action}${didYouMean(field, known)}. ` +
          'To send a field this action does not have (as a newer rack might), pass it in extraData.',
      );
    }
    if (value !== undefined) checkValue(fail, `data.${field}`, value, kind);
  }
}

function checkExtraData(
  fail: (message: string) => never,
  action: string,
  extra: unknown,
  fields: { readonly [field: string]: FieldKind },
): void {
  if (!isPlainObject(extra)) fail(`extraData must be an object of fields ${action} does not have; got ${describeValue(extra)}`);
  for (const [field, value] of Object.entries(extra)) {
    if (Object.hasOwn(fields, field)) fail(`extraData.${field} is a field of ${action}: pass it in data, where its value is checked`);
    if (value !== undefined) checkValue(fail, `extraData.${field}`, value, 'string');
  }
}

/**
 * Throws a `TypeError` naming the action and the field for anything in `overrides` that the
 * types of {@link TestEventOverrides} would reject, or that the action's schema fixes otherwise.
 * `undefined` anywhere means "not given".
 */
export function checkOverrides(action: string, overrides: unknown): void {
  const fail: (message: string) => never = (message) => {
    throw new TypeError(`createTestEvent(${JSON.stringify(action)}): ${message}`);
  };
  if (overrides === undefined) return;
  if (!isPlainObject(overrides)) fail(`overrides must be an object of ${OPTIONS.join(', ')}; got ${describeValue(overrides)}`);
  const { status, data } = ACTION_FIELDS[action]!;
  for (const [option, value] of Object.entries(overrides)) {
    if (!(OPTIONS as readonly string[]).includes(option)) {
      fail(`unknown option ${JSON.stringify(option)}${didYouMean(option, OPTIONS)}; it takes ${OPTIONS.join(', ')}`);
    }
    if (value === undefined) continue;
    if ((option === 'status' || option === 'timestamp') && typeof value !== 'string') {
      fail(`${option} must be a string; got ${describeValue(value)}`);
    }
    if (option === 'status' && status !== undefined && !status.includes(value as string)) {
      fail(`status ${describeValue(value)} is not one ${action} can have (${list(status)})`);
    }
    if (option === 'data') checkData(fail, action, value, data);
    if (option === 'extraData') checkExtraData(fail, action, value, data);
  }
}
