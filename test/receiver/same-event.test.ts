// "The same event" (docs/receiver.md, src/receiver/same-event.ts), as properties: for events with a tick_id,
// any change to a non-time data field, the action or the status gives a distinct event; any change
// to t, the envelope timestamp or *_at / timestamp data fields alone does not. Checked on the key
// itself with many runs, and end to end through receivers on the memory store, Redis and an inbox.
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createReceiver, MemoryDedupStore, signSync, type DedupStore, type Receiver } from '../../src/index.js';
import { createInbox } from '../../src/inbox.js';
import { RedisDedupStore } from '../../src/redis.js';
import { deliveryKeys, type DeliveryKeys } from '../../src/receiver/dedup-keys.js';
import { isTimeField } from '../../src/receiver/same-event.js';
import { parseEvent, type AnyWebhookEvent } from '../../src/index.js';
import { openDatabase } from '../inbox/databases.js';
import { SECRET, T0 } from './helpers.js';

interface Wire {
  action: string;
  status: string;
  timestamp: string;
  data: Record<string, string>;
}

type ValueOf<A> = A extends fc.Arbitrary<infer T> ? T : never;

const TICK = 'tick-2026-04-27T10:30:00Z-1f0c9a7e5b2d4c3e8a9b0c1d2e3f4a5b';
const fieldName = fc.stringMatching(/^[a-z][a-z_]{0,11}$/).filter((name) => !isTimeField(name) && name !== 'tick_id');
const timeName = fc.oneof(fc.constant('timestamp'), fc.stringMatching(/^[a-z]{1,8}_at$/));
const rfc3339 = fc
  .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-01-01T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString());

/** A tick event as the rack sends it: every data value a string, some time fields among the rest. */
const tickEvent: fc.Arbitrary<Wire> = fc
  .record({
    action: fc.constantFrom('app:budget:auto-shutdown:failed', 'app:budget:auto-shutdown:fired', 'app:budget:from-the-future'),
    status: fc.constantFrom('success', 'error', 'cancelled'),
    timestamp: rfc3339,
    fields: fc.dictionary(fieldName, fc.string({ maxLength: 12 }), { minKeys: 1, maxKeys: 6 }),
    times: fc.dictionary(timeName, rfc3339, { maxKeys: 3 }),
  })
  .map(({ action, status, timestamp, fields, times }) => ({
    action,
    status,
    timestamp,
    data: { ...fields, ...times, tick_id: TICK, app: 'billing-api' },
  }));

function keysOf(wire: Wire): DeliveryKeys {
  const body = JSON.stringify(wire);
  return deliveryKeys(body, parseEvent(body) as AnyWebhookEvent) as DeliveryKeys;
}

/** Changes that make another event: a non-time field's value, a field more or less, the action, the status. */
const distinctChange = fc.oneof(
  fc.record({ kind: fc.constant('value' as const), text: fc.string({ maxLength: 8 }) }),
  fc.record({ kind: fc.constant('add' as const), name: fieldName, text: fc.string({ maxLength: 8 }) }),
  fc.record({ kind: fc.constant('remove' as const) }),
  fc.record({ kind: fc.constant('action' as const) }),
  fc.record({ kind: fc.constant('status' as const), text: fc.string({ maxLength: 8 }) }),
);

function applyDistinct(wire: Wire, change: ValueOf<typeof distinctChange>): Wire | undefined {
  const data = { ...wire.data };
  const names = Object.keys(data).filter((name) => !isTimeField(name) && name !== 'tick_id' && name !== 'app');
  switch (change.kind) {
    case 'value': {
      const name = names[0]!;
      if (data[name] === change.text) return undefined;
      data[name] = change.text;
      return { ...wire, data };
    }
    case 'add':
      if (change.name in data) return undefined;
      return { ...wire, data: { ...data, [change.name]: change.text } };
    case 'remove':
      delete data[names[0]!];
      return { ...wire, data };
    case 'action':
      return {
        ...wire,
        action: wire.action === 'app:budget:auto-shutdown:failed' ? 'app:budget:auto-shutdown:fired' : 'app:budget:auto-shutdown:failed',
      };
    case 'status':
      return change.text === wire.status ? undefined : { ...wire, status: change.text };
  }
}

/** Only time changes: the envelope timestamp, every time field, and the data keys' order. */
const timeChange = fc.record({ timestamp: rfc3339, shift: fc.integer({ min: 1, max: 10_000 }), reverse: fc.boolean() });

function applyTime(wire: Wire, change: ValueOf<typeof timeChange>): Wire {
  const entries = Object.entries(wire.data).map(([name, value]): [string, string] =>
    isTimeField(name) ? [name, new Date(Date.parse(value) + change.shift * 1000).toISOString()] : [name, value],
  );
  if (change.reverse) entries.reverse();
  return { ...wire, timestamp: change.timestamp, data: Object.fromEntries(entries) };
}

describe('the event key', () => {
  it('differs for any change to a non-time field, the action or the status', () => {
    fc.assert(
      fc.property(tickEvent, distinctChange, (wire, change) => {
        const changed = applyDistinct(wire, change);
        fc.pre(changed !== undefined);
        expect(keysOf(changed!).eventKey).not.toBe(keysOf(wire).eventKey);
      }),
      { numRuns: 500 },
    );
  });

  it('stays the same when only the timestamp, *_at / timestamp fields or the key order change', () => {
    fc.assert(
      fc.property(tickEvent, timeChange, (wire, change) => {
        const changed = applyTime(wire, change);
        expect(keysOf(changed).eventKey).toBe(keysOf(wire).eventKey);
      }),
      { numRuns: 500 },
    );
  });

  it('is absent without a tick_id, and the body key is the bytes alone', () => {
    fc.assert(
      fc.property(tickEvent, (wire) => {
        const { tick_id: _tick, ...data } = wire.data;
        const keys = keysOf({ ...wire, data });
        expect(keys.eventKey).toBeUndefined();
        expect(keys.bodyKey).toMatch(/^body:[A-Za-z0-9_-]{43}$/);
      }),
    );
  });
});

// End to end: the same pairs through real receivers. `t` moves too, as the rack's re-dispatch would.
const redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: false, maxRetriesPerRequest: 1 });
afterAll(() => redis.quit());

function request(wire: Wire, t: number) {
  const body = JSON.stringify(wire);
  return { body, headers: { 'service-signature': signSync(body, { secrets: SECRET, timestamp: t }) } };
}

async function outcomes(receiver: Receiver<unknown>, first: Wire, second: Wire): Promise<string[]> {
  const a = await receiver.receive(request(first, T0));
  const b = await receiver.receive(request(second, T0 + 1));
  return [a.outcome, b.outcome];
}

const stores: [string, () => DedupStore][] = [
  ['memory store', () => new MemoryDedupStore()],
  ['Redis', () => new RedisDedupStore(redis, { prefix: `rw-test:same-event:${Math.random().toString(36).slice(2)}:` })],
];

describe.each(stores)('receivers on the %s', (_name, makeStore) => {
  const receiver = () => createReceiver<undefined>({ secrets: SECRET, now: () => (T0 + 2) * 1000, dedup: makeStore() });
  it('process two distinct events, and drop a time-only repeat', async () => {
    await fc.assert(
      fc.asyncProperty(tickEvent, distinctChange, timeChange, async (wire, change, time) => {
        const changed = applyDistinct(wire, change);
        fc.pre(changed !== undefined);
        const accepted = changed!.action === 'app:budget:from-the-future' ? 'ignored' : 'processed';
        expect((await outcomes(receiver(), wire, changed!))[1]).toBe(accepted);
        expect((await outcomes(receiver(), wire, applyTime(wire, time)))[1]).toBe('duplicate');
      }),
      { numRuns: 60 },
    );
  });
});

describe('receivers on an inbox (PostgreSQL)', () => {
  // 40 runs of three receives each on PostgreSQL: vitest's 5 s default timed out at load 14 on 2 cores.
  it('store a distinct event as accepted, and a time-only repeat as a duplicate row', { timeout: 60_000 }, async () => {
    const db = await openDatabase('pg');
    try {
      const inbox = createInbox({ database: db.database, table: db.table });
      await inbox.migrate();
      const receiver = createReceiver({ secrets: SECRET, now: () => (T0 + 2) * 1000, inbox });
      let round = 0;
      await fc.assert(
        fc.asyncProperty(tickEvent, distinctChange, timeChange, async (wire, change, time) => {
          const changed = applyDistinct(wire, change);
          fc.pre(changed !== undefined && changed.action !== 'app:budget:from-the-future' && wire.action !== 'app:budget:from-the-future');
          // A tick of its own per run, so runs never see each other's rows.
          const tick = `${TICK.slice(0, -4)}${(round++).toString(16).padStart(4, '0')}`;
          const own = (event: Wire): Wire => ({ ...event, data: { ...event.data, tick_id: tick } });
          const [, distinct] = await outcomes(receiver, own(wire), own(changed!));
          expect(distinct).toBe('accepted');
          const repeat = await receiver.receive(request(own(applyTime(wire, time)), T0 + 1));
          if (JSON.stringify(applyTime(wire, time)) === JSON.stringify(wire)) expect(repeat.id).toBeUndefined();
          else expect(repeat).toMatchObject({ outcome: 'duplicate', duplicateOf: expect.stringMatching(/^\d+$/) });
        }),
        { numRuns: 40 },
      );
    } finally {
      await db.close();
    }
  });
});
