import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareEvents, timestampNanos, type AnyWebhookEvent } from '../../src/index.js';
import { generalNanos } from '../../src/events/compare.js';

const event = (timestamp: string, action = 'app:budget:auto-shutdown:armed', data: Record<string, string> = { rack: 'r' }) =>
  ({ action, status: 'success', timestamp, data }) as AnyWebhookEvent;

describe('timestampNanos', () => {
  it('reads UTC timestamps by hand exactly as the general parser does (property)', () => {
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const stamp = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')),
        two(13),
        two(32),
        two(24),
        two(60),
        two(60),
        fc.option(fc.stringMatching(/^[0-9]{1,10}$/), { nil: undefined }),
        fc.constantFrom('Z', 'z', '+00:00'),
      )
      .map(
        ([y, mo, d, h, mi, se, fraction, zone]) => `${y}-${mo}-${d}T${h}:${mi}:${se}${fraction === undefined ? '' : `.${fraction}`}${zone}`,
      );
    fc.assert(
      fc.property(stamp, (text) => timestampNanos(text) === generalNanos(text)),
      { numRuns: 3000 },
    );
    for (const text of [
      '2026-04-27T10:30:00.Z',
      '2026-04-27T10:30:00.1234567890Z',
      '2026-04-27 10:30:00Z',
      '0999-01-01T00:00:00Z',
      '2026-04-27T10:30:00.12a4Z',
      '+2026-04-27T10:30:00Z',
    ]) {
      expect(timestampNanos(text), text).toBe(generalNanos(text));
    }
  });
  it('keeps every fractional digit that Date.parse drops', () => {
    expect(timestampNanos('2015-10-28T03:46:24.106682533Z')).toBe(1446003984106682533n);
    expect(timestampNanos('2015-10-28T03:46:24.106682534Z')! - timestampNanos('2015-10-28T03:46:24.106682533Z')!).toBe(1n);
    expect(timestampNanos('2026-04-27T10:30:00Z')).toBe(1777285800000000000n);
    expect(timestampNanos('2026-04-27T10:30:00.1Z')).toBe(1777285800100000000n);
  });
  it('honours offsets', () => {
    expect(timestampNanos('2026-04-27T12:30:00.5+02:00')).toBe(timestampNanos('2026-04-27T10:30:00.5Z'));
  });
  it.each([
    '',
    'yesterday',
    '2026-04-27',
    '2026-04-27T10:30:00',
    '2026-04-27T10:30:00.1234567890Z',
    '2026-13-45T10:30:00Z',
    // Dates Date.parse rolls over instead of refusing: 30 February, 29 February outside a leap year,
    // hour 24, minute 60, and offsets past 23:59.
    '2026-02-30T10:00:00Z',
    '2026-02-29T10:00:00Z',
    '2100-02-29T10:00:00Z',
    '2026-04-31T10:00:00Z',
    '2026-04-27T24:00:00Z',
    '2026-04-27T10:60:00Z',
    '2026-04-27T10:30:60Z',
    '2026-04-27T10:30:00+24:00',
    '2026-04-27T10:30:00+05:60',
    '2026-00-10T10:30:00Z',
  ])('refuses %j', (text) => {
    expect(timestampNanos(text)).toBeUndefined();
  });
  it('takes the calendar edges that exist', () => {
    expect(timestampNanos('2024-02-29T23:59:59Z')).toBe(BigInt(Date.UTC(2024, 1, 29, 23, 59, 59)) * 1_000_000n);
    expect(timestampNanos('2000-02-29T00:00:00Z')).toBe(BigInt(Date.UTC(2000, 1, 29)) * 1_000_000n);
    expect(timestampNanos('2026-12-31T00:00:00-23:59')).toBe(BigInt(Date.UTC(2026, 11, 31, 23, 59)) * 1_000_000n);
  });
  it('round-trips any nanosecond instant formatted the way racks send it', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 4_102_444_800_000_000_000n }), (nanos) => {
        const seconds = new Date(Number(nanos / 1_000_000_000n) * 1000).toISOString().slice(0, 19);
        const fraction = (nanos % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
        expect(timestampNanos(`${seconds}${fraction === '' ? '' : `.${fraction}`}Z`)).toBe(nanos);
      }),
    );
  });
});

describe('compareEvents', () => {
  it('breaks a tie on data nested deeper than JSON.stringify can go without throwing', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const a = { ...event('2026-04-27T10:30:00Z'), data: JSON.parse(`{"rack":"r","deep":${deep}}`) } as AnyWebhookEvent;
    const b = { ...event('2026-04-27T10:30:00Z'), data: JSON.parse(`{"rack":"r","deep":${deep}}`) } as AnyWebhookEvent;
    expect(() => [a, b].sort(compareEvents)).not.toThrow();
    expect(compareEvents(a, b)).toBe(0);
  });

  it('orders two events in the same millisecond, which Date.parse cannot', () => {
    const early = event('2026-04-27T10:30:00.106682533Z', 'app:budget:auto-shutdown:fired');
    const late = event('2026-04-27T10:30:00.106682534Z', 'app:budget:auto-shutdown:armed');
    expect(Date.parse(early.timestamp)).toBe(Date.parse(late.timestamp));
    expect([late, early].sort(compareEvents)).toEqual([early, late]);
    expect(compareEvents(early, late)).toBeLessThan(0);
  });
  it('treats trailing zeros as the same instant and breaks the tie by action', () => {
    const a = event('2026-04-27T10:30:00.1Z', 'app:budget:set');
    const b = event('2026-04-27T10:30:00.100000000Z', 'app:budget:breaker-cleared');
    expect([a, b].sort(compareEvents)).toEqual([b, a]);
  });
  it('breaks a full tie by tick_id, then by data, and puts unparseable timestamps last', () => {
    const x = event('2026-04-27T10:30:00Z', 'a:b', { tick_id: 'tick-2', rack: 'r' });
    const y = event('2026-04-27T10:30:00Z', 'a:b', { tick_id: 'tick-1', rack: 'r' });
    const z = event('2026-04-27T10:30:00Z', 'a:b', { tick_id: 'tick-1', rack: 's' });
    const bad = event('not a time');
    expect([bad, x, z, y].sort(compareEvents)).toEqual([y, z, x, bad]);
  });
  it('is a consistent total order: antisymmetric, transitive, and zero only for equal content', () => {
    const ts = fc.oneof(
      fc.constantFrom(
        '2026-04-27T10:30:00Z',
        '2026-04-27T10:30:00.1Z',
        '2026-04-27T10:30:00.100000001Z',
        '2026-04-27T12:30:00+02:00',
        'garbage',
      ),
      fc.integer({ min: 0, max: 999_999_999 }).map((n) => `2026-04-27T10:30:00.${String(n).padStart(9, '0')}Z`),
    );
    const arbitraryEvent = fc
      .record({ timestamp: ts, action: fc.constantFrom('a:b', 'a:c'), tick: fc.constantFrom('t1', 't2'), app: fc.constantFrom('x', 'y') })
      .map((e) => event(e.timestamp, e.action, { tick_id: e.tick, app: e.app }));
    fc.assert(
      fc.property(arbitraryEvent, arbitraryEvent, arbitraryEvent, (a, b, c) => {
        expect(Math.sign(compareEvents(a, b))).toBe(-Math.sign(compareEvents(b, a)) || 0);
        if (compareEvents(a, b) <= 0 && compareEvents(b, c) <= 0) expect(compareEvents(a, c)).toBeLessThanOrEqual(0);
        if (compareEvents(a, b) === 0) expect(a.action === b.action && JSON.stringify(a.data) === JSON.stringify(b.data)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
