/**
 * The rack's answers checked against the shapes of rack-api.md section 2, keeping only what a
 * reconciler reads. A release's `env` (every secret of the app) is never copied.
 */
import type { RackApp, RackBuild, RackBudget, RackRelease, RackShutdownState, RackSystem } from './types.js';

/** Thrown for an answer of the wrong shape; the client turns it into `rack_bad_answer`. */
export class ShapeError extends Error {}

type Json = Record<string, unknown>;

function object(value: unknown, what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ShapeError(`${what} is not an object`);
  return value as Json;
}

function text(record: Json, key: string, what: string): string {
  const value = record[key];
  if (typeof value !== 'string') throw new ShapeError(`${what}.${key} is not a string`);
  return value;
}

function optionalText(record: Json, key: string): string {
  const value = record[key];
  return typeof value === 'string' ? value : '';
}

function list<T>(value: unknown, what: string, item: (entry: unknown, index: number) => T): T[] {
  if (!Array.isArray(value)) throw new ShapeError(`${what} is not a list`);
  return value.map(item);
}

/**
 * The named text fields of a record, in the order named: a `required` one must be a string, an
 * `optional` one is `''` when it is not. Nothing else of the record is copied.
 */
function textFields<K extends string>(value: unknown, what: string, spec: Record<K, 'required' | 'optional'>): Record<K, string> {
  const record = object(value, what);
  const entries = Object.entries(spec).map(([key, need]) => [
    key,
    need === 'required' ? text(record, key, what) : optionalText(record, key),
  ]);
  return Object.fromEntries(entries) as Record<K, string>;
}

export function parseApp(value: unknown, what = 'app'): RackApp {
  const fields = textFields(value, what, { name: 'required', release: 'optional', status: 'optional' });
  return { ...fields, locked: (value as Json)['locked'] === true };
}

export function parseBuild(value: unknown, what = 'build'): RackBuild {
  return textFields(value, what, {
    id: 'required',
    app: 'optional',
    status: 'required',
    release: 'optional',
    process: 'optional',
    reason: 'optional',
    started: 'required',
    ended: 'optional',
  });
}

/** Only the named fields: `env` and `manifest` are left behind. */
export function parseRelease(value: unknown, what = 'release'): RackRelease {
  return textFields(value, what, { id: 'required', app: 'optional', build: 'optional', created: 'required' });
}

export const parseApps = (value: unknown) => list(value, 'apps', (entry, index) => parseApp(entry, `apps[${index}]`));
export const parseBuilds = (value: unknown) => list(value, 'builds', (entry, index) => parseBuild(entry, `builds[${index}]`));
export const parseReleases = (value: unknown) => list(value, 'releases', (entry, index) => parseRelease(entry, `releases[${index}]`));

export function parseBudget(value: unknown): RackBudget {
  const record = object(value, 'budget');
  const part = (key: string) => (record[key] === null || record[key] === undefined ? null : object(record[key], `budget.${key}`));
  return { config: part('config'), state: part('state') };
}

const SHUTDOWN_TIMES = [
  'armedAt',
  'shutdownAt',
  'restoredAt',
  'expiredAt',
  'armedNotificationFiredAt',
  'firedNotificationFiredAt',
  'failedNotificationFiredAt',
  'expiredNotificationFiredAt',
  'restoredNotificationFiredAt',
  'cancelledNotificationFiredAt',
  'noopNotificationFiredAt',
  'flapSuppressedNotificationFiredAt',
] as const;

export function parseShutdownState(value: unknown): RackShutdownState | null {
  if (value === null) return null;
  const record = object(value, 'shutdown state');
  text(record, 'shutdownTickId', 'shutdown state');
  for (const key of SHUTDOWN_TIMES) {
    const time = record[key] ?? null;
    if (time !== null && typeof time !== 'string') throw new ShapeError(`shutdown state.${key} is neither a time nor null`);
  }
  const times = Object.fromEntries(SHUTDOWN_TIMES.map((key) => [key, (record[key] as string | null | undefined) ?? null]));
  return { ...record, ...times } as RackShutdownState;
}

export function parseSystem(value: unknown): RackSystem {
  return textFields(value, 'system', { name: 'required', provider: 'optional', version: 'optional', 'rack-domain': 'optional' });
}
