import type { AnyWebhookEvent, WebhookAction } from '../../src/index.js';
import { createTestEvent, type TestEvent, type TestEventOverrides } from '../../src/testing/index.js';

/**
 * Events for the rack-state tests, shaped as racks send them (the samples of `createTestEvent`,
 * every data value a string) but with fixed timestamps and tick ids, so a test says exactly which
 * event sorts where.
 */
export const APP = 'billing-api';

/** 2026-04-27T10:30:00Z, the time of the spec's armed sample. */
const T0_MS = Date.UTC(2026, 3, 27, 10, 30, 0);
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

/** RFC 3339 `ms` after T0 plus `ns` (0–999,999) nanoseconds, trailing zeros dropped as racks write it. */
export function at(ms: number, ns = 0): string {
  const date = new Date(T0_MS + ms);
  const fraction = `${String(date.getUTCMilliseconds()).padStart(3, '0')}${String(ns).padStart(6, '0')}`.replace(/0+$/, '');
  return `${date.toISOString().slice(0, 19)}${fraction === '' ? '' : `.${fraction}`}Z`;
}

/** `tick-<second>Z-<32 hex>` as racks make them, distinct per `n`. */
export function tickId(n: number, ms = 0): string {
  return `tick-${new Date(T0_MS + ms).toISOString().slice(0, 19)}Z-9fe533fc297241caa6ca5760${n.toString(16).padStart(8, '0')}`;
}

/** A known event with its data overrides checked against the action's fields; `app` defaults to {@link APP}. */
export function event<A extends WebhookAction>(
  action: A,
  timestamp: string,
  data: TestEventOverrides<A>['data'] = {},
  status?: TestEventOverrides<A>['status'],
): TestEvent<A> {
  const overrides = { timestamp, data: { app: APP, ...data }, ...(status === undefined ? {} : { status }) };
  return createTestEvent(action, overrides as TestEventOverrides<A>);
}

export type ShutdownKind =
  'armed' | 'fired' | 'failed' | 'cancelled' | 'restored' | 'dismissed' | 'expired' | 'flap-suppressed' | 'noop' | 'simulated';

/** An `app:budget:auto-shutdown:<kind>` event of tick `tick`. `armed` carries its countdown. */
export function shutdown(
  kind: ShutdownKind,
  timestamp: string,
  tick: string | undefined,
  data: Record<string, string> = {},
): AnyWebhookEvent {
  const countdown =
    kind === 'armed'
      ? {
          scheduled_at: timestamp.slice(0, 19) + 'Z',
          expected_shutdown_at: new Date(Date.parse(timestamp) + HOUR).toISOString().slice(0, 19) + 'Z',
        }
      : {};
  const event = createTestEvent(`app:budget:auto-shutdown:${kind}`, { timestamp, data: { app: APP, ...countdown, ...data } as never });
  const eventData = event.data as Record<string, string>;
  // The samples carry a random tick_id; a sequence needs its own (or none, as :simulated sends).
  if (tick === undefined) delete eventData['tick_id'];
  else eventData['tick_id'] = tick;
  return event;
}

/** The actor a `:cancelled` carries for each reason (spec: cancel_reason table). */
export const CANCEL_REASONS = {
  'reset-during-armed': 'ops@example.com',
  'cap-raised': 'dana@example.com',
  'manual-detected': 'system',
  'config-changed': 'system',
  'countdown-lapsed': 'system',
} as const;
export type CancelReason = keyof typeof CANCEL_REASONS;

/** An app's state as the first event about it leaves it: idle, closed, nothing set, as of `updatedAt`. */
export function freshApp(app: string, updatedAt: string) {
  return {
    app,
    autoShutdown: { phase: 'idle' },
    breaker: { state: 'closed' },
    budget: {},
    scaleOverrides: {},
    triggersOverrides: {},
    promotes: {},
    updatedAt,
  };
}
