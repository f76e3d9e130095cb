/** A DeliveryFilter as a WHERE clause, and the ids and times it accepts: for list, retry, replay, prune and follow. */
import { timestampNanos } from '../../events/compare.js';
import { DELIVERY_STATES, type DeliveryFilter } from '../types.js';

export const MAX_INT8 = 2n ** 63n - 1n;
const MIN_INT8 = -(2n ** 63n);

/**
 * Event time as nanoseconds (text, for an int8 parameter every client accepts), within what an
 * int8 column holds: "from the beginning of time" is a normal query, not an SQL error.
 */
function toNanos(name: string, value: Date | string | bigint): string {
  let nanos: bigint | undefined;
  if (typeof value === 'bigint') nanos = value;
  else if (value instanceof Date) {
    const millis = value.getTime();
    if (Number.isNaN(millis)) throw new RangeError(`${name} is an invalid Date`);
    nanos = BigInt(millis) * 1_000_000n;
  } else if (typeof value === 'string') {
    nanos = timestampNanos(value);
    if (nanos === undefined)
      throw new RangeError(`${name} must be an RFC 3339 timestamp such as 2026-11-23T10:00:00Z, got ${JSON.stringify(value)}`);
  } else throw new TypeError(`${name} must be a Date, an RFC 3339 string or nanoseconds as a bigint`);
  return (nanos > MAX_INT8 ? MAX_INT8 : nanos < MIN_INT8 ? MIN_INT8 : nanos).toString();
}

export function asList<T>(value: T | readonly T[]): readonly T[] {
  return Array.isArray(value) ? (value as readonly T[]) : [value as T];
}

const PATTERN = /^[^*]+(:\*)?$/;
const MAX_IDS = 1000;

/**
 * A WHERE clause and its parameters, numbered from `firstParam`. `queue`: the inbox's queue table (migration 10). Given, a filter on states that are not `done`
 * also asks the queue, whose state index finds those rows where the log has none: `state: 'dead'`
 * reads the dead rows, not the whole history.
 */
export function buildWhere(filter: DeliveryFilter, firstParam = 1, queue?: string): { sql: string; params: unknown[] } {
  if (typeof filter !== 'object' || filter === null) throw new TypeError('a filter must be an object such as { state: "dead" }');
  const clauses: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${firstParam + params.length - 1}`;
  };
  if (filter.from !== undefined) clauses.push(`event_ns >= ${param(toNanos('from', filter.from))}::bigint`);
  if (filter.to !== undefined) clauses.push(`event_ns < ${param(toNanos('to', filter.to))}::bigint`);
  if (filter.state !== undefined) {
    const states = asList(filter.state);
    for (const state of states) {
      if (!DELIVERY_STATES.includes(state))
        throw new RangeError(`state must be one of ${DELIVERY_STATES.join(', ')}, got ${JSON.stringify(state)}`);
    }
    const list = states.map((state) => param(state)).join(', ');
    clauses.push(states.length === 0 ? 'FALSE' : `state IN (${list})`);
    if (queue !== undefined && states.length > 0 && !states.includes('done'))
      clauses.push(`id IN (SELECT id FROM ${queue} WHERE state IN (${list}))`);
  }
  if (filter.action !== undefined) {
    const alternatives = asList(filter.action).map((pattern) => {
      if (typeof pattern !== 'string' || !PATTERN.test(pattern)) {
        throw new TypeError(`action must be an action or a "prefix:*" pattern, got ${JSON.stringify(pattern)}`);
      }
      // A prefix pattern matches on text, never through LIKE: an action may hold % or _.
      return pattern.endsWith(':*')
        ? `left(action, ${param(pattern.length - 1)}::int) = ${param(pattern.slice(0, -1))}`
        : `action = ${param(pattern)}`;
    });
    clauses.push(alternatives.length === 0 ? 'FALSE' : alternatives.length === 1 ? alternatives[0]! : `(${alternatives.join(' OR ')})`);
  }
  if (filter.app !== undefined) {
    if (typeof filter.app !== 'string') throw new TypeError('app must be a string');
    clauses.push(`app = ${param(filter.app)}`);
  }
  if (filter.ids !== undefined) {
    const ids = asList(filter.ids)
      .map((id) => toId(id))
      .filter(isStorableId);
    if (ids.length > MAX_IDS) throw new RangeError(`ids takes at most ${MAX_IDS} ids at once, got ${ids.length}`);
    // One parameter each, never an array parameter: postgres.js with fetch_types: false cannot send one.
    clauses.push(ids.length === 0 ? 'FALSE' : `id IN (${ids.map((id) => `${param(id)}::bigint`).join(', ')})`);
  }
  return { sql: clauses.length === 0 ? 'TRUE' : clauses.join(' AND '), params };
}

/** A delivery id as the database takes it; anything else is a TypeError, not a SQL error. */
export function toId(id: unknown): string {
  const text = typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : id;
  if (typeof text !== 'string' || !/^[1-9][0-9]{0,18}$/.test(text))
    throw new TypeError(`a delivery id is a positive whole number, got ${JSON.stringify(id)}`);
  return text;
}

/** An id no row can have (past int8): `get` resolves undefined, `retry` changes nothing. */
export function isStorableId(id: string): boolean {
  return BigInt(id) <= MAX_INT8;
}
