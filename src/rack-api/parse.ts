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

export function parseApp(value: unknown, what = 'app'): RackApp {
  const record = object(value, what);
  return {
    name: text(record, 'name', what),
    release: optionalText(record, 'release'),
    status: optionalText(record, 'status'),
    locked: record['locked'] === true,
  };
}

export function parseBuild(value: unknown, what = 'build'): RackBuild {
  const record = object(value, what);
  return {
    id: text(record, 'id', what),
    app: optionalText(record, 'app'),
    status: text(record, 'status', what),
    release: optionalText(record, 'release'),
    process: optionalText(record, 'process'),
    reason: optionalText(record, 'reason'),
    started: text(record, 'started', what),
    ended: optionalText(record, 'ended'),
  };
}

/** Only the named fields: `env` and `manifest` are left behind. */
export function parseRelease(value: unknown, what = 'release'): RackRelease {
  const record = object(value, what);
  return {
    id: text(record, 'id', what),
    app: optionalText(record, 'app'),
    build: optionalText(record, 'build'),
    created: text(record, 'created', what),
  };
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
  const record = object(value, 'system');
  return {
    name: text(record, 'name', 'system'),
    provider: optionalText(record, 'provider'),
    version: optionalText(record, 'version'),
    'rack-domain': optionalText(record, 'rack-domain'),
  };
}
