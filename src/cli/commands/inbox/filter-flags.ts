/** The filter flags list, retry, replay and export share, checked before the database is opened. */
import { likelyIntendedAction } from '../../../events/action-names.js';
import { timestampNanos } from '../../../events/compare.js';
import { DELIVERY_STATES, type DeliveryFilter, type DeliveryState } from '../../../inbox/facade/index.js';
import { UsageError, stringFlag, type FlagDeclarations, type Flags } from '../../args.js';

export const FILTER_FLAGS = {
  state: {
    type: 'string',
    multiple: true,
    value: 'S',
    help: 'pending, running, done, dead, ignored or duplicate (repeat it, or write "dead,done")',
  },
  action: { type: 'string', multiple: true, value: 'A', help: 'an action, or a prefix pattern such as app:budget:* (repeat for several)' },
  app: { type: 'string', value: 'NAME', help: 'deliveries about this app' },
  from: {
    type: 'string',
    value: 'T',
    help: `event time at or after T: RFC 3339 (2026-11-23T10:00:00Z, nanoseconds kept),
a date (2026-11-23, UTC), or an age (90s, 15m, 12h, 30d, 2w ago)`,
  },
  to: { type: 'string', value: 'T', help: 'event time before T (the same forms)' },
} as const satisfies FlagDeclarations;

/** The filter flags of a command that moves deliveries out of one state only: --state says so. */
export function filterFlagsFor(state: 'dead' | 'done', help = `optional: only ${state} deliveries are ever moved`): FlagDeclarations {
  return { ...FILTER_FLAGS, state: { ...FILTER_FLAGS.state, value: state, help } };
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const AGE = /^(\d{1,9})(s|m|h|d|w)$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** What the inbox takes as an action filter: an action, or `prefix:*`. */
const ACTION_PATTERN = /^[^*]+(:\*)?$/;

function shown(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/** An age (`30d`) as the moment that long before `now`; undefined when the text is not one. */
export function ageToDate(text: string, now: number): Date | undefined {
  const match = AGE.exec(text);
  return match === null ? undefined : new Date(now - Number(match[1]) * UNIT_MS[match[2]!]!);
}

/** `--from`/`--to`: an RFC 3339 string as typed (so nanoseconds survive), or one made from a date or an age. */
export function eventTimeFlag(flags: Flags, name: string, now: number): string | undefined {
  const text = stringFlag(flags, name);
  if (text === undefined) return undefined;
  const age = ageToDate(text, now);
  if (age !== undefined) return age.toISOString();
  const candidate = DATE.test(text) ? `${text}T00:00:00Z` : text;
  if (timestampNanos(candidate) !== undefined) return candidate;
  throw new UsageError(
    `--${name} must be an RFC 3339 time (2026-11-23T10:00:00Z), a date (2026-11-23) or an age such as 30d, got ${shown(text)}`,
  );
}

/** A moment in wall-clock time (a date, an RFC 3339 time, or an age); undefined when the flag is not given. */
export function momentFlag(flags: Flags, name: string, now: number): Date | undefined {
  const text = stringFlag(flags, name);
  if (text === undefined) return undefined;
  const age = ageToDate(text, now);
  if (age !== undefined) return age;
  const candidate = DATE.test(text) ? `${text}T00:00:00Z` : text;
  const nanos = timestampNanos(candidate);
  if (nanos === undefined)
    throw new UsageError(`--${name} must be a date (2026-11-23), an RFC 3339 time or an age such as 30d, got ${shown(text)}`);
  return new Date(Number(nanos / 1_000_000n));
}

/** `prune --before`: a moment in wall-clock time (a date, an RFC 3339 time, or an age). */
export function beforeFlag(flags: Flags, now: number): Date {
  const before = momentFlag(flags, 'before', now);
  if (before === undefined) throw new UsageError('no --before: pass a date (2026-11-23), an RFC 3339 time, or an age such as 30d');
  return before;
}

function states(flags: Flags): DeliveryState[] | undefined {
  const values = (flags['state'] as string[] | undefined)?.flatMap((value) => value.split(','));
  if (values === undefined) return undefined;
  for (const value of values) {
    if (!(DELIVERY_STATES as readonly string[]).includes(value))
      throw new UsageError(`--state must be one of ${DELIVERY_STATES.join(', ')}, got ${shown(value)}`);
  }
  return values as DeliveryState[];
}

function actions(flags: Flags): string[] | undefined {
  const values = flags['action'] as string[] | undefined;
  for (const value of values ?? []) {
    if (!ACTION_PATTERN.test(value))
      throw new UsageError(`--action must be an action or a prefix pattern ending in :* (app:budget:*), got ${shown(value)}`);
    // A typo would match nothing and list nothing; a name far from every known one may be a newer rack's.
    const intended = likelyIntendedAction(value);
    if (intended !== undefined && intended !== value)
      throw new UsageError(`--action ${shown(value)} is not a known action: did you mean ${JSON.stringify(intended)}?`);
  }
  return values;
}

/** The filter the flags describe; `{}` when none was given. */
export function filterFromFlags(flags: Flags, now = Date.now()): DeliveryFilter {
  const filter: DeliveryFilter = {};
  const state = states(flags);
  const action = actions(flags);
  const app = stringFlag(flags, 'app');
  const from = eventTimeFlag(flags, 'from', now);
  const to = eventTimeFlag(flags, 'to', now);
  if (state !== undefined) filter.state = state;
  if (action !== undefined) filter.action = action;
  if (app !== undefined) filter.app = app;
  if (from !== undefined) filter.from = from;
  if (to !== undefined) filter.to = to;
  return filter;
}

export function isEmptyFilter(filter: DeliveryFilter): boolean {
  return Object.keys(filter).length === 0;
}

/** A delivery id as typed: a positive whole number (the row's id). */
export function idArgument(text: string | undefined, usage: string): string {
  if (text === undefined) throw new UsageError(`no delivery id: ${usage}`);
  // Not echoed, as no stray argument is: it may be a key pasted in the wrong place.
  if (!/^[1-9][0-9]{0,18}$/.test(text)) throw new UsageError('a delivery id is a positive whole number, as inbox list shows it');
  return text;
}
