import { timestampNanos } from '../events/compare.js';
import type { AnyWebhookEvent } from '../events/types.js';
import type { LifecycleIndex } from './lifecycle-index.js';
import type { Anomaly } from './types.js';

function nanosOf(event: AnyWebhookEvent): bigint {
  return timestampNanos(event.timestamp) ?? 0n;
}

/**
 * What the spec says cannot happen, judged in event time: a partner event that may still be in
 * flight is waited for until the newest event seen is `grace` past it. So the list depends only
 * on the set of events applied, never on when they arrived or on the wall clock.
 */
export function findAnomalies(app: string, index: LifecycleIndex, newest: bigint, grace: bigint): Anomaly[] {
  const found: Anomaly[] = [];
  const waited = (event: AnyWebhookEvent) => newest - nanosOf(event) >= grace;
  for (const [releaseId, promote] of index.promoteEvents()) {
    if (promote.terminals.length > 1) {
      found.push({
        kind: 'promote_multiple_terminals',
        app,
        id: releaseId,
        message: `release ${releaseId} of ${app} has ${promote.terminals.length} terminal promote events (${promote.terminals.map((event) => event.action).join(', ')}); the spec promises exactly one`,
        events: [...(promote.start === undefined ? [] : [promote.start]), ...promote.terminals],
      });
    }
    const first = promote.terminals[0];
    if (first !== undefined && promote.start === undefined && waited(first)) {
      found.push({
        kind: 'promote_terminal_without_start',
        app,
        id: releaseId,
        message: `${first.action} for release ${releaseId} of ${app} without its release:promote start`,
        events: promote.terminals,
      });
    }
  }
  for (const [tickId, tick] of index.ticks()) {
    if (tick.fired !== undefined && tick.armed === undefined && waited(tick.fired)) {
      found.push({
        kind: 'fired_without_armed',
        app,
        id: tickId,
        message: `auto-shutdown of ${app} fired in tick ${tickId} without :armed`,
        events: [tick.fired],
      });
    }
    // A shutdown that failed is restored too (rack-api.md section 4, rule 4).
    if (tick.restored !== undefined && tick.fired === undefined && tick.failed === undefined && waited(tick.restored)) {
      found.push({
        kind: 'restored_without_fired',
        app,
        id: tickId,
        message: `auto-shutdown of ${app} restored in tick ${tickId} without :fired or :failed`,
        events: [tick.restored],
      });
    }
  }
  return found;
}
