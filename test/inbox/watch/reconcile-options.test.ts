import { describe, expect, it } from 'vitest';
import { resolveWatchOptions } from '../../../src/inbox/watch/options.js';
import { systemClock } from '../../../src/inbox/clock.js';
import { createRackClient } from '../../../src/rack-api/client.js';

const client = createRackClient({ url: 'https://api.rack.example', token: 'opaque' });
const onAlert = () => {};
const resolve = (reconcile: unknown, withAlerts = true) =>
  resolveWatchOptions({ ...(withAlerts ? { onAlert } : {}), reconcile: reconcile as never }, systemClock).reconcile;

describe('the reconcile option of inbox.watch()', () => {
  it('defaults to a pass every 15 minutes over twice that, read-only, warning 7 days before the token lapses', () => {
    expect(resolve({ client })).toEqual({
      client,
      everyMs: 900_000,
      windowMs: 1_800_000,
      apps: undefined,
      record: false,
      expiryWarningMs: 604_800_000,
      keepOpenMs: 604_800_000,
    });
    expect(resolve({ client, everyMs: 60_000, apps: ['web'] })).toMatchObject({ everyMs: 60_000, windowMs: 120_000, apps: ['web'] });
  });

  it('refuses what is wrong, naming it', () => {
    expect(() => resolve({ client }, false)).toThrow('reconcile needs onAlert');
    expect(() => resolve({})).toThrow(/reconcile\.client must be a client of the rack API/);
    expect(() => resolve({ client: { url: 'https://x' } })).toThrow(TypeError);
    expect(() => resolve({ client, everyMs: 59_999 })).toThrow('reconcile.everyMs must be a whole number of ms from 60000 to 86400000');
    expect(() => resolve({ client, everyMs: 86_400_001 })).toThrow(RangeError);
    // The window must outlast the period and the grace period: else proofs fall between passes.
    expect(() => resolve({ client, everyMs: 600_000, windowMs: 600_000 })).toThrow(
      'reconcile.windowMs must be a whole number of ms from 660000',
    );
    expect(() => resolve({ client, apps: ['web', ''] })).toThrow('reconcile.apps must be a list of app names');
    expect(() => resolve({ client, record: 'yes' })).toThrow('reconcile.record must be true or false');
    expect(resolve({ client, record: true })?.record).toBe(true);
    expect(() => resolve({ client, keepOpenMs: 1000 })).toThrow(/reconcile\.keepOpenMs/);
  });
});
