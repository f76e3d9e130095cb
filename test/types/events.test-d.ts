import { describe, expectTypeOf, it } from 'vitest';
import {
  ON_CALL_ACTIONS,
  ROUTINE_ACTIONS,
  WEBHOOK_ACTIONS,
  createReceiver,
  isKnownEvent,
  isOnCallEvent,
  parseEvent,
  type AnyWebhookEvent,
  type AppBudgetAutoShutdownCancelledEvent,
  type AppBudgetAutoShutdownFiredEvent,
  type AppBudgetPerServiceTruncatedEvent,
  type EventOf,
  type EventValidators,
  type KnownStatus,
  type Receiver,
  type UnknownWebhookEvent,
  type WebhookAction,
  type WebhookEvent,
} from '../../src/index.js';

declare const event: WebhookEvent;

describe('the known union narrows on action', () => {
  it('auto-shutdown family', () => {
    switch (event.action) {
      case 'app:budget:auto-shutdown:cancelled':
        expectTypeOf(event).toEqualTypeOf<AppBudgetAutoShutdownCancelledEvent>();
        expectTypeOf(event.data.cancel_reason).toEqualTypeOf<
          'reset-during-armed' | 'cap-raised' | 'manual-detected' | 'config-changed' | 'countdown-lapsed'
        >();
        expectTypeOf(event.data.tick_id).toEqualTypeOf<string>();
        break;
      case 'app:budget:auto-shutdown:fired':
        expectTypeOf(event.data.actor).toEqualTypeOf<'system'>();
        // @ts-expect-error cancel_reason belongs to :cancelled only
        void event.data.cancel_reason;
        break;
    }
  });

  it('budget, scale and triggers families', () => {
    if (event.action === 'app:budget:per-service-truncated') {
      expectTypeOf(event).toEqualTypeOf<AppBudgetPerServiceTruncatedEvent>();
      expectTypeOf(event.data.dropped).toEqualTypeOf<number>();
      expectTypeOf(event.data.cap).toEqualTypeOf<number>();
    }
    if (event.action === 'app:scale-override:toggled') {
      expectTypeOf(event.data.state).toEqualTypeOf<'on' | 'off'>();
      expectTypeOf(event.data.service).toEqualTypeOf<string>();
    }
    if (event.action === 'app:triggers-override:threshold-set') {
      expectTypeOf(event.data.threshold).toEqualTypeOf<string>();
      // @ts-expect-error state belongs to :toggled
      void event.data.state;
    }
    if (event.action === 'app:budget:set') {
      expectTypeOf(event.data.new_cap_usd).toEqualTypeOf<string | undefined>();
    }
  });

  it("the field notes' fields: optional, strings, with the known values where the notes give them", () => {
    switch (event.action) {
      case 'release:agent-autoscale-ignored':
        expectTypeOf(event.status).toEqualTypeOf<KnownStatus | (string & {})>();
        expectTypeOf(event.data.actor).toEqualTypeOf<string>();
        expectTypeOf(event.data.release).toEqualTypeOf<string | undefined>();
        expectTypeOf(event.data.service).toEqualTypeOf<string | undefined>();
        // @ts-expect-error reason belongs to the other release advisories
        void event.data.reason;
        break;
      case 'release:manifest-advisory':
      case 'release:autoscale-disabled':
      case 'release:imperative-patch-note':
        expectTypeOf(event.data.service).toEqualTypeOf<string | undefined>();
        expectTypeOf(event.data.reason).toEqualTypeOf<string | undefined>();
        break;
      case 'app:budget:cap':
        expectTypeOf(event.data.action).toEqualTypeOf<string | undefined>();
        expectTypeOf(event.data.spend_usd).toEqualTypeOf<string | undefined>();
        break;
      case 'app:budget:threshold':
        expectTypeOf(event.data.pct).toEqualTypeOf<string | undefined>();
        break;
      case 'app:budget:reset':
        expectTypeOf(event.data.reset_kind).toEqualTypeOf<'breaker-clear' | 'period-reset' | undefined>();
        break;
      case 'app:budget:breaker-cleared':
        expectTypeOf(event.data.reason).toEqualTypeOf<'cap-raised' | undefined>();
        break;
      case 'app:budget:auto-shutdown:failed':
        expectTypeOf(event.data.partial_state).toEqualTypeOf<'1' | '0' | undefined>();
        expectTypeOf(event.data.failed_services).toEqualTypeOf<string | undefined>();
        // counts stay strings: the spec types only dropped, cap, preserved_count and yaml_count_min as integers
        expectTypeOf(event.data.retry_count).toEqualTypeOf<string | undefined>();
        break;
      case 'app:budget:auto-shutdown:fired':
        expectTypeOf(event.data.shut_down_count).toEqualTypeOf<string | undefined>();
        expectTypeOf(event.data.snapshot_annotation).toEqualTypeOf<string | undefined>();
        break;
      case 'app:budget:auto-shutdown:restored':
        expectTypeOf(event.data.restored_services).toEqualTypeOf<string | undefined>();
        break;
      case 'app:budget:auto-shutdown:dismissed':
        expectTypeOf(event.data.idempotent).toEqualTypeOf<string | undefined>();
        // @ts-expect-error partial_state belongs to :failed only
        void event.data.partial_state;
        break;
    }
  });

  it('build and release family with fixed statuses', () => {
    if (event.action === 'release:promote') expectTypeOf(event.status).toEqualTypeOf<'start'>();
    if (event.action === 'build:create') expectTypeOf(event.status).toEqualTypeOf<'success' | 'error'>();
    if (event.action === 'release:prometheus-skipped') expectTypeOf(event.status).toEqualTypeOf<'skipped'>();
    if (event.action === 'app:create') {
      expectTypeOf(event.status).toEqualTypeOf<KnownStatus | (string & {})>();
      expectTypeOf(event.data.name).toEqualTypeOf<string>();
      expectTypeOf(event.data.app).toEqualTypeOf<string | undefined>();
    }
  });

  it('a switch over every action is exhaustive', () => {
    function label(e: WebhookEvent): string {
      switch (e.action) {
        case 'app:create':
        case 'build:create':
        case 'build:import-image:start':
        case 'build:import-image:done':
        case 'build:cancel':
        case 'release:create':
        case 'release:promote':
        case 'app:promote:completed':
        case 'app:promote:errored':
        case 'app:promote:cancelled':
        case 'release:autoscale-disabled':
        case 'release:manifest-advisory':
        case 'release:prometheus-skipped':
        case 'release:imperative-patch-note':
        case 'release:agent-autoscale-ignored':
        case 'app:budget:set':
        case 'app:budget:reset':
        case 'app:budget:clear':
        case 'app:budget:threshold':
        case 'app:budget:cap':
        case 'app:budget:breaker-cleared':
        case 'app:budget:per-service-truncated':
        case 'app:scale-override:toggled':
        case 'app:scale-override:honored':
        case 'app:triggers-override:toggled':
        case 'app:triggers-override:threshold-set':
        case 'app:budget:auto-shutdown:armed':
        case 'app:budget:auto-shutdown:fired':
        case 'app:budget:auto-shutdown:cancelled':
        case 'app:budget:auto-shutdown:restored':
        case 'app:budget:auto-shutdown:expired':
        case 'app:budget:auto-shutdown:flap-suppressed':
        case 'app:budget:auto-shutdown:noop':
        case 'app:budget:auto-shutdown:failed':
        case 'app:budget:auto-shutdown:simulated':
        case 'app:budget:auto-shutdown:dismissed':
          return e.action;
        default: {
          const never: never = e;
          return never;
        }
      }
    }
    expectTypeOf(label).returns.toEqualTypeOf<string>();
  });
});

describe('catalog constants', () => {
  it('WEBHOOK_ACTIONS is a readonly tuple of literals', () => {
    expectTypeOf(WEBHOOK_ACTIONS).toMatchTypeOf<readonly WebhookAction[]>();
    expectTypeOf(WEBHOOK_ACTIONS[0]).toEqualTypeOf<'app:create'>();
    expectTypeOf(WEBHOOK_ACTIONS.length).toEqualTypeOf<36>();
    // @ts-expect-error readonly
    WEBHOOK_ACTIONS.push('app:create');
    expectTypeOf<WebhookAction>().toEqualTypeOf<WebhookEvent['action']>();
    expectTypeOf<EventOf<'app:budget:auto-shutdown:fired'>>().toEqualTypeOf<AppBudgetAutoShutdownFiredEvent>();
  });
  it('filter sets are typed constants', () => {
    expectTypeOf(ROUTINE_ACTIONS).toEqualTypeOf<readonly ['app:budget:auto-shutdown:noop', 'app:budget:auto-shutdown:simulated']>();
    expectTypeOf(ON_CALL_ACTIONS[2]).toEqualTypeOf<'app:budget:cap'>();
  });
});

describe('unknown actions are representable without making the known types lie', () => {
  it('parseEvent returns known or unknown; isKnownEvent narrows to the exact union', () => {
    const parsed = parseEvent('{}');
    expectTypeOf(parsed).toEqualTypeOf<AnyWebhookEvent>();
    expectTypeOf<AnyWebhookEvent>().toEqualTypeOf<WebhookEvent | UnknownWebhookEvent>();
    if (isKnownEvent(parsed)) {
      expectTypeOf(parsed).toEqualTypeOf<WebhookEvent>();
    } else {
      expectTypeOf(parsed).toEqualTypeOf<UnknownWebhookEvent>();
      expectTypeOf(parsed.action).toEqualTypeOf<string>();
    }
    if (isOnCallEvent(parsed))
      expectTypeOf(parsed.action).toEqualTypeOf<'app:budget:auto-shutdown:fired' | 'app:budget:auto-shutdown:failed' | 'app:budget:cap'>();
  });
});

describe('the validate option', () => {
  it('takes a boolean or the validators of rack-webhooks/validate, and nothing else', async () => {
    const { validators } = await import('../../src/validate.js');
    expectTypeOf(validators).toEqualTypeOf<EventValidators>();
    expectTypeOf(parseEvent('{}', { validate: validators })).toEqualTypeOf<AnyWebhookEvent>();
    expectTypeOf(parseEvent('{}', { validate: true })).toEqualTypeOf<AnyWebhookEvent>();
    expectTypeOf(createReceiver({ secrets: 'k', validate: validators })).toEqualTypeOf<Receiver>();
    // @ts-expect-error a string is not a validate option
    parseEvent('{}', { validate: 'yes' });
    // @ts-expect-error a set needs assertValid
    createReceiver({ secrets: 'k', validate: {} });
  });
});
