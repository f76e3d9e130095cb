import { describe, expectTypeOf, it } from 'vitest';
import {
  createReceiver,
  type ActionPattern,
  type AnyWebhookEvent,
  type AppBudgetAutoShutdownFiredEvent,
  type AppBudgetCapEvent,
  type EventForPattern,
  type ReceiveResult,
  type WebhookEvent,
} from '../../src/index.js';

const receiver = createReceiver({ secrets: 'k' });

describe('receiver handler types', () => {
  it('an action gives its exact event', () => {
    receiver.on('app:budget:auto-shutdown:fired', (event) => {
      expectTypeOf(event).toEqualTypeOf<AppBudgetAutoShutdownFiredEvent>();
      expectTypeOf(event.data.actor).toEqualTypeOf<'system'>();
    });
  });

  it('a list gives the union of its actions', () => {
    receiver.on(['app:budget:cap', 'app:budget:auto-shutdown:fired'], (event) => {
      expectTypeOf(event).toEqualTypeOf<AppBudgetCapEvent | AppBudgetAutoShutdownFiredEvent>();
    });
  });

  it('a prefix pattern gives the union of the matching actions', () => {
    receiver.on('app:budget:auto-shutdown:*', (event) => {
      expectTypeOf(event.action).toEqualTypeOf<
        | 'app:budget:auto-shutdown:armed'
        | 'app:budget:auto-shutdown:fired'
        | 'app:budget:auto-shutdown:cancelled'
        | 'app:budget:auto-shutdown:restored'
        | 'app:budget:auto-shutdown:expired'
        | 'app:budget:auto-shutdown:flap-suppressed'
        | 'app:budget:auto-shutdown:noop'
        | 'app:budget:auto-shutdown:failed'
        | 'app:budget:auto-shutdown:simulated'
        | 'app:budget:auto-shutdown:dismissed'
      >();
    });
    expectTypeOf<EventForPattern<'build:*'>['action']>().toEqualTypeOf<
      'build:create' | 'build:import-image:start' | 'build:import-image:done' | 'build:cancel'
    >();
    expectTypeOf<EventForPattern<'app:*'>>().toMatchTypeOf<WebhookEvent>();
  });

  it('patterns are checked', () => {
    expectTypeOf<'app:budget:*'>().toMatchTypeOf<ActionPattern>();
    expectTypeOf<'app:budget:auto-shutdown:*'>().toMatchTypeOf<ActionPattern>();
    // @ts-expect-error not a prefix of any action
    receiver.on('deploy:*', () => {});
    // @ts-expect-error a misspelled action
    receiver.on('app:budget:capp', () => {});
    receiver.on('app:budget:cap', (event) => {
      // @ts-expect-error a field of another event
      void event.data.cancel_reason;
    });
  });

  it('onAny sees known and unknown events; receive returns the outcome', () => {
    receiver.onAny((event) => expectTypeOf(event).toEqualTypeOf<AnyWebhookEvent>());
    expectTypeOf(receiver.receive).returns.toEqualTypeOf<Promise<ReceiveResult>>();
    expectTypeOf<ReceiveResult['outcome']>().toEqualTypeOf<'processed' | 'accepted' | 'duplicate' | 'ignored'>();
  });
});
