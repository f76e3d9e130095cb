import { timestampNanos } from '../events/compare.js';
import { findAnomalies } from './anomalies.js';
import { AppLog } from './app-log.js';
import { appOf } from './fold.js';
import { LifecycleIndex } from './lifecycle-index.js';
import type { Anomaly, AppState, ApplyResult, PhaseTransition, RackState, RackStateOptions } from './types.js';

const HOUR_MS = 3_600_000;
const NO_TRANSITIONS: readonly PhaseTransition[] = /* @__PURE__ */ Object.freeze([]);
const MIN_WINDOW_MS = 24 * HOUR_MS;
const NANOS_PER_MS = 1_000_000n;

function resolveMs(name: string, value: number | undefined, fallback: number, minimum: number): bigint {
  const ms = value ?? fallback;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < minimum) {
    throw new RangeError(`${name} must be a finite number of milliseconds >= ${minimum}, got ${String(value)}`);
  }
  return BigInt(Math.round(ms)) * NANOS_PER_MS;
}

/**
 * Every app's lifecycles, folded from events in any arrival order: each app keeps its events of
 * the window sorted by timestamp, and a late one re-folds what it precedes.
 *
 * The state depends only on the set of events applied, never on their arrival order, and
 * applying an event twice changes nothing. Zero dependencies, every runtime.
 *
 * @param options - The window of event time each app keeps, and the anomalies' grace period.
 * @returns The state: `apply` events, read `app(name)`, `apps()`, `anomalies()`, and listen with `onTransition`.
 * @throws `RangeError` for a `windowMs` under 24 hours or a negative `gracePeriodMs`.
 *
 * @example
 * ```ts
 * import { createRackState } from 'rack-webhooks';
 *
 * const state = createRackState();
 * receiver.onAny((event) => state.apply(event));
 * state.onTransition(({ app, lifecycle, to }) => {
 *   if (lifecycle === 'auto-shutdown' && to === 'shutdown-failed') void page(`${app}: shutdown failed`);
 * });
 * state.app('billing-api')?.autoShutdown.phase; // 'idle', 'armed', 'shut-down', 'shutdown-failed' or 'restored'
 * ```
 */
export function createRackState(options: RackStateOptions = {}): RackState {
  const window = resolveMs('windowMs', options.windowMs, MIN_WINDOW_MS, MIN_WINDOW_MS);
  const grace = resolveMs('gracePeriodMs', options.gracePeriodMs, 10 * 60_000, 0);
  const logs = new Map<string, AppLog>();
  const indexes = new Map<string, LifecycleIndex>();
  const stateOf = (app: string, log: AppLog): AppState => ({ ...log.current.state, promotes: indexes.get(app)!.promotes() });
  const listeners = new Set<(transition: PhaseTransition) => void>();

  const notify = (transitions: readonly PhaseTransition[]) => {
    for (const transition of transitions) {
      for (const listener of listeners) {
        try {
          listener(transition);
        } catch {
          // A listener's failure must not leave the state half-told to the others.
        }
      }
    }
  };

  return {
    apply(event) {
      const app =
        typeof event === 'object' && event !== null && typeof event.data === 'object' && event.data !== null ? appOf(event) : undefined;
      if (app === undefined) return { applied: false, reason: 'no_app', late: false, transitions: [] };
      const nanos = typeof event.timestamp === 'string' ? timestampNanos(event.timestamp) : undefined;
      if (nanos === undefined) return { applied: false, app, reason: 'invalid_timestamp', late: false, transitions: [] };
      let log = logs.get(app);
      let index: LifecycleIndex;
      if (log === undefined) {
        logs.set(app, (log = new AppLog(app)));
        indexes.set(app, (index = new LifecycleIndex()));
      } else {
        index = indexes.get(app)!;
      }
      const before = log.current.state;
      const placement = log.insert(event, nanos);
      if (placement.kind !== 'inserted') return { applied: false, app, reason: placement.kind, late: false, transitions: [] };
      const after = log.current.state;
      index.add(event, nanos, after.autoShutdown.tickId);
      // Each app's window runs back from its own newest event: another app's clock cannot move it.
      log.compact(log.newest! - window);
      // Most events change no phase: they share one empty, frozen list.
      let transitions: readonly PhaseTransition[] = NO_TRANSITIONS;
      if (after.autoShutdown !== before.autoShutdown || after.breaker !== before.breaker) {
        const changed: PhaseTransition[] = [];
        if (after.autoShutdown.phase !== before.autoShutdown.phase) {
          changed.push({
            app,
            lifecycle: 'auto-shutdown',
            from: before.autoShutdown.phase,
            to: after.autoShutdown.phase,
            event,
            late: placement.late,
          });
        }
        if (after.breaker.state !== before.breaker.state) {
          changed.push({ app, lifecycle: 'breaker', from: before.breaker.state, to: after.breaker.state, event, late: placement.late });
        }
        if (changed.length > 0) notify((transitions = changed));
      }
      const result: ApplyResult = { applied: true, app, late: placement.late, transitions };
      return result;
    },
    app(name) {
      const log = logs.get(name);
      return log === undefined ? undefined : stateOf(name, log);
    },
    apps: () => [...logs].map(([app, log]) => stateOf(app, log)).sort((a, b) => (a.app < b.app ? -1 : a.app > b.app ? 1 : 0)),
    anomalies() {
      const found: Anomaly[] = [];
      for (const [app, log] of [...logs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        if (log.newest !== undefined) found.push(...findAnomalies(app, indexes.get(app)!, log.newest, grace));
      }
      return found;
    },
    onTransition(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  } satisfies RackState;
}
