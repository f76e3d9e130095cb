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
});
