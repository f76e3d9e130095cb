import { describe, expectTypeOf, it } from 'vitest';
import { createTestEvent, type TestEvent } from '../../src/testing/index.js';

describe('createTestEvent types', () => {
  it("returns the action's event with data as it travels (strings)", () => {
    const event = createTestEvent('app:budget:per-service-truncated');
    expectTypeOf(event.action).toEqualTypeOf<'app:budget:per-service-truncated'>();
    expectTypeOf(event.data.dropped).toEqualTypeOf<string>();
    expectTypeOf(event).toEqualTypeOf<TestEvent<'app:budget:per-service-truncated'>>();
  });

  it("checks overrides against that action's fields", () => {
    createTestEvent('app:budget:auto-shutdown:cancelled', { data: { cancel_reason: 'cap-raised' } });
    createTestEvent('app:scale-override:toggled', { data: { state: 'off' } });
    // @ts-expect-error cancel_reason is not a field of toggled
    createTestEvent('app:scale-override:toggled', { data: { cancel_reason: 'cap-raised' } });
    // @ts-expect-error state is 'on' or 'off'
    createTestEvent('app:scale-override:toggled', { data: { state: 'maybe' } });
    // @ts-expect-error release:promote's status is fixed
    createTestEvent('release:promote', { status: 'success' });
    // @ts-expect-error not an action
    createTestEvent('app:nothing');
  });

  it("takes the field notes' fields and the new action, as strings", () => {
    const ignored = createTestEvent('release:agent-autoscale-ignored', { data: { release: 'RABC', service: 'log-shipper' } });
    expectTypeOf(ignored.data.service).toEqualTypeOf<string | undefined>();
    createTestEvent('app:budget:auto-shutdown:failed', { data: { partial_state: '0', failed_services: 'web', retry_count: '5' } });
    createTestEvent('app:budget:reset', { data: { reset_kind: 'period-reset' } });
    createTestEvent('app:budget:cap', { data: { action: 'block-new-deploys', cap_usd: '100', spend_usd: '100.10' } });
    createTestEvent('app:budget:per-service-truncated', { data: { dropped: '3' } });
    // @ts-expect-error integer fields travel as decimal strings
    createTestEvent('app:budget:per-service-truncated', { data: { dropped: 3 } });
    // @ts-expect-error counts the spec does not type are strings too
    createTestEvent('app:budget:auto-shutdown:failed', { data: { retry_count: 5 } });
    // @ts-expect-error partial_state is "1" or "0"
    createTestEvent('app:budget:auto-shutdown:failed', { data: { partial_state: 'yes' } });
    // @ts-expect-error partial_state is a field of :failed only
    createTestEvent('app:budget:auto-shutdown:fired', { data: { partial_state: '1' } });
  });

  it('sends fields the action does not have only through extraData, as strings', () => {
    createTestEvent('app:budget:cap', { extraData: { added_by_a_newer_rack: 'yes' } });
    // @ts-expect-error extraData values are strings, as the rack sends them
    createTestEvent('app:budget:cap', { extraData: { added_by_a_newer_rack: 1 } });
    // @ts-expect-error an unknown option
    createTestEvent('app:budget:cap', { stauts: 'success' });
  });
});
