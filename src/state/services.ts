import type { AnyWebhookEvent } from '../events/types.js';
import type { BuildState, PromoteOutcome, PromoteState, ReleaseState, ScaleOverride, TriggersOverride } from './types.js';
import { field } from './read-field.js';

type Data = Readonly<Record<string, unknown>>;

/** A record keyed by sender-chosen text (`__proto__` is a valid release id): own properties only. */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}

export function stepScaleOverrides(
  overrides: Readonly<Record<string, ScaleOverride>>,
  event: AnyWebhookEvent,
): Readonly<Record<string, ScaleOverride>> {
  if (event.action !== 'app:scale-override:toggled') return overrides;
  const data = event.data as Data;
  const service = field(data, 'service');
  const state = field(data, 'state');
  if (service === undefined || state === undefined) return overrides;
  return { ...overrides, [service]: { state, at: event.timestamp, ...optional('actor', field(data, 'ack_by') ?? field(data, 'actor')) } };
}

export function stepTriggersOverrides(
  overrides: Readonly<Record<string, TriggersOverride>>,
  event: AnyWebhookEvent,
): Readonly<Record<string, TriggersOverride>> {
  if (!event.action.startsWith('app:triggers-override:')) return overrides;
  const data = event.data as Data;
  const service = field(data, 'service');
  if (service === undefined) return overrides;
  const current: TriggersOverride = own(overrides, service) ?? { at: event.timestamp, thresholds: {} };
  if (event.action === 'app:triggers-override:toggled') {
    const state = field(data, 'state');
    return {
      ...overrides,
      [service]: { ...current, at: event.timestamp, ...optional('state', state), ...optional('crd', field(data, 'crd')) },
    };
  }
  if (event.action === 'app:triggers-override:threshold-set') {
    const type = field(data, 'type');
    const threshold = field(data, 'threshold');
    if (type === undefined || threshold === undefined) return overrides;
    return { ...overrides, [service]: { ...current, at: event.timestamp, thresholds: { ...current.thresholds, [type]: threshold } } };
  }
  return overrides;
}

// A Map: an action named `constructor` finds nothing here.
const TERMINALS: ReadonlyMap<string, PromoteOutcome> = /* @__PURE__ */ new Map([
  ['app:promote:completed', 'completed'],
  ['app:promote:errored', 'errored'],
  ['app:promote:cancelled', 'cancelled'],
]);

/** Promotes per release id: the start, then the first terminal outcome by timestamp. */
export function stepPromotes(
  promotes: Readonly<Record<string, PromoteState>>,
  event: AnyWebhookEvent,
): Readonly<Record<string, PromoteState>> {
  const outcome = TERMINALS.get(event.action);
  if (outcome === undefined && event.action !== 'release:promote') return promotes;
  const data = event.data as Data;
  const releaseId = field(data, 'id');
  if (releaseId === undefined) return promotes;
  const current: PromoteState = own(promotes, releaseId) ?? { releaseId };
  if (outcome === undefined) {
    if (current.startedAt !== undefined) return promotes;
    return {
      ...promotes,
      [releaseId]: { ...current, startedAt: event.timestamp, ...optional('actor', current.actor ?? field(data, 'actor')) },
    };
  }
  // Exactly one terminal event per lifecycle, says the spec; a second one is an anomaly, not a new outcome.
  if (current.outcome !== undefined) return promotes;
  return {
    ...promotes,
    [releaseId]: {
      ...current,
      outcome,
      endedAt: event.timestamp,
      ...optional('actor', current.actor ?? field(data, 'actor')),
      ...optional('message', field(data, 'message')),
    },
  };
}

const BUILD_ACTIONS = /* @__PURE__ */ new Set(['build:create', 'build:import-image:start', 'build:import-image:done', 'build:cancel']);

export function stepBuild(build: BuildState | undefined, event: AnyWebhookEvent): BuildState | undefined {
  if (!BUILD_ACTIONS.has(event.action)) return build;
  const data = event.data as Data;
  return {
    action: event.action,
    status: event.status,
    at: event.timestamp,
    ...optional('id', field(data, 'id') ?? field(data, 'build')),
    ...optional('message', field(data, 'message')),
  };
}

export function stepRelease(release: ReleaseState | undefined, event: AnyWebhookEvent): ReleaseState | undefined {
  if (event.action !== 'release:create') return release;
  return { at: event.timestamp, ...optional('id', field(event.data as Data, 'id')) };
}
