/**
 * What the console tests show: three apps over the last two hours. billing-api crosses its cap,
 * is armed, fired, and its shutdown fails (the handler for :failed is down, so that delivery ends
 * dead); payments-api is armed now, its countdown running; orders-api fired without :armed (an
 * anomaly, once the grace period has passed in its own event time).
 */
import { createTestEvent, rackTickId, rackTimestamp } from '../../src/testing/test-event.js';

const MINUTE = 60_000;

export interface ScenarioEvent {
  readonly name: string;
  readonly event: object;
}

export function scenario(now = Date.now()): ScenarioEvent[] {
  const base = Math.floor((now - 120 * MINUTE) / MINUTE) * MINUTE;
  const at = (minutes: number) => new Date(base + minutes * MINUTE);
  const time = (minutes: number) => rackTimestamp(at(minutes));
  const billingTick = rackTickId(at(30));
  const paymentsTick = rackTickId(new Date(now - 5 * MINUTE));
  const ordersTick = rackTickId(at(5));
  const iso = (date: Date) => date.toISOString().replace('.000Z', 'Z');
  return [
    { name: 'billing set', event: createTestEvent('app:budget:set', { timestamp: time(0), data: { app: 'billing-api' } }) },
    { name: 'billing threshold', event: createTestEvent('app:budget:threshold', { timestamp: time(10), data: { app: 'billing-api' } }) },
    { name: 'billing cap', event: createTestEvent('app:budget:cap', { timestamp: time(20), data: { app: 'billing-api' } }) },
    {
      name: 'billing armed',
      event: createTestEvent('app:budget:auto-shutdown:armed', {
        timestamp: time(30),
        data: { app: 'billing-api', tick_id: billingTick, scheduled_at: iso(at(30)), expected_shutdown_at: iso(at(60)) },
      }),
    },
    {
      name: 'billing fired',
      event: createTestEvent('app:budget:auto-shutdown:fired', { timestamp: time(60), data: { app: 'billing-api', tick_id: billingTick } }),
    },
    {
      name: 'billing failed',
      event: createTestEvent('app:budget:auto-shutdown:failed', {
        timestamp: time(61),
        data: { app: 'billing-api', tick_id: billingTick },
      }),
    },
    { name: 'billing promote', event: createTestEvent('release:promote', { timestamp: time(70), data: { app: 'billing-api' } }) },
    {
      name: 'orders fired',
      event: createTestEvent('app:budget:auto-shutdown:fired', { timestamp: time(5), data: { app: 'orders-api', tick_id: ordersTick } }),
    },
    { name: 'orders threshold', event: createTestEvent('app:budget:threshold', { timestamp: time(40), data: { app: 'orders-api' } }) },
    {
      name: 'payments armed',
      event: createTestEvent('app:budget:auto-shutdown:armed', {
        timestamp: rackTimestamp(new Date(now - 5 * MINUTE)),
        data: {
          app: 'payments-api',
          tick_id: paymentsTick,
          scheduled_at: iso(new Date(Math.floor((now - 5 * MINUTE) / 1000) * 1000)),
          expected_shutdown_at: iso(new Date(Math.floor((now + 55 * MINUTE) / 1000) * 1000)),
        },
      }),
    },
  ];
}

/** The action whose handler is down in the scenario: its delivery ends dead. */
export const FAILING_ACTION = 'app:budget:auto-shutdown:failed';
