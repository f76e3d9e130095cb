/** The delivery log: a filtered page, one delivery in full, and the retry and replay actions. */
import {
  attemptJson,
  DELIVERY_STATES,
  deliveryJson,
  type DeliveryState,
  type HistorySpan,
  type InboxMonitor,
  type InboxOperator,
  type ListOptions,
  type StoredDeliveryDetail,
} from '../../../inbox/facade/index.js';
import { ConsoleRequestError } from './http.js';
import type { FieldDescriber } from './schema-fields.js';
import { liveWorkers } from './workers.js';

export const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;

/** A row as the page reads it: no body, no signature (the inbox's JSON shape, as `list --json` prints it). */
export const deliveryRow = deliveryJson;

function list(text: string | null): string[] | undefined {
  if (text === null || text.trim() === '') return undefined;
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/** The query string as the inbox's list options; every bad value is a 400 naming the parameter. */
export function listOptionsFrom(query: URLSearchParams): ListOptions {
  for (const [name, value] of query) {
    // PostgreSQL text cannot hold U+0000: a filter with one names nothing, and says so.
    if (value.includes('\u0000')) throw new ConsoleRequestError(400, 'bad_filter', `${name} holds a NUL character`);
  }
  const options: ListOptions = { order: 'desc', limit: DEFAULT_PAGE_SIZE };
  const states = list(query.get('state'));
  if (states !== undefined) {
    const unknown = states.find((state) => !DELIVERY_STATES.includes(state as DeliveryState));
    if (unknown !== undefined)
      throw new ConsoleRequestError(
        400,
        'bad_filter',
        `state must be one of ${DELIVERY_STATES.join(', ')}, got ${JSON.stringify(unknown)}`,
      );
    options.state = states as DeliveryState[];
  }
  const actions = list(query.get('action'));
  if (actions !== undefined) {
    const bad = actions.find((action) => !/^[^*]+(:\*)?$/.test(action));
    if (bad !== undefined)
      throw new ConsoleRequestError(
        400,
        'bad_filter',
        `action must be an action or a prefix:* pattern such as app:budget:*, got ${JSON.stringify(bad)}`,
      );
    options.action = actions;
  }
  const app = query.get('app')?.trim();
  if (app !== undefined && app !== '') options.app = app;
  for (const name of ['from', 'to'] as const) {
    const value = query.get(name)?.trim();
    if (value !== undefined && value !== '') options[name] = value; // checked by the inbox (RangeError: 400)
  }
  const limit = query.get('limit');
  if (limit !== null) {
    const count = /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (!Number.isInteger(count) || count < 1 || count > MAX_PAGE_SIZE)
      throw new ConsoleRequestError(400, 'bad_filter', `limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
    options.limit = count;
  }
  const after = query.get('after');
  if (after !== null && after !== '') options.after = after;
  return options;
}

export async function listPage(operator: InboxOperator, query: URLSearchParams) {
  const page = await operator.list(listOptionsFrom(query));
  return { deliveries: page.deliveries.map(deliveryRow), next: page.next ?? null };
}

function verification(delivery: StoredDeliveryDetail) {
  const received = delivery.receivedAt.getTime();
  return {
    signedAt: delivery.signedAt,
    signedAtIso: new Date(delivery.signedAt * 1000).toISOString(),
    receivedAt: delivery.receivedAt.toISOString(),
    // How far the receiver's clock was past the signature's t when the delivery arrived.
    skewSeconds: Math.round(received - delivery.signedAt * 1000) / 1000,
    secretIndex: delivery.secretIndex,
  };
}

/** Ids are positive integers; anything else names no delivery (404, like a number that is not there). */
function checkedId(id: string): string {
  if (!/^[1-9]\d{0,18}$/.test(id))
    throw new ConsoleRequestError(404, 'not_found', `no delivery with id ${JSON.stringify(id.slice(0, 40))}`);
  return id;
}

export async function deliveryDetail(operator: InboxOperator, id: string, describe: FieldDescriber) {
  const delivery = await operator.get(checkedId(id));
  if (delivery === undefined) throw new ConsoleRequestError(404, 'not_found', `no delivery with id ${JSON.stringify(id)}`);
  return {
    delivery: {
      ...deliveryRow(delivery),
      event: delivery.event ?? null,
      fields: describe(delivery.event),
      verification: verification(delivery),
      attempts: delivery.attemptLog.map(attemptJson),
    },
  };
}

/** Retry (dead or duplicate -> pending) or replay (done -> pending) one delivery; 404 or 409 say why nothing moved. */
export async function moveOne({ operator, monitor }: Ports, id: string, action: 'retry' | 'replay'): Promise<Moved> {
  checkedId(id);
  const moved = action === 'retry' ? await operator.retry(id) : await operator.replay({ ids: [id] });
  if (moved > 0) return { moved, liveWorkers: await liveWorkers(monitor) };
  const delivery = await operator.get(id);
  if (delivery === undefined) throw new ConsoleRequestError(404, 'not_found', `no delivery with id ${JSON.stringify(id)}`);
  const from = action === 'retry' ? 'dead' : 'done';
  const moves = action === 'retry' ? 'dead and duplicate' : 'done';
  throw new ConsoleRequestError(409, `not_${from}`, `delivery ${id} is ${delivery.state}: ${action} moves ${moves} deliveries only`);
}

export async function retryAllDead({ operator, monitor }: Ports): Promise<Moved> {
  const moved = await operator.retry({ state: 'dead' });
  return { moved, liveWorkers: await liveWorkers(monitor) };
}

/** The two ports the console holds. */
type Ports = { readonly operator: InboxOperator; readonly monitor: InboxMonitor };

/** What a move answers: how many moved, and how many workers are live to run them (null: no heartbeats in this schema). */
export interface Moved {
  readonly moved: number;
  readonly liveWorkers: number | null;
}

/** `?span=day` (the default) or `week`; anything else is a 400 the page can show. */
export function historySpan(value: string | null): HistorySpan {
  if (value === null || value === '' || value === 'day') return 'day';
  if (value === 'week') return 'week';
  throw new ConsoleRequestError(400, 'bad_filter', `span must be day or week, got ${JSON.stringify(value.slice(0, 40))}`);
}
