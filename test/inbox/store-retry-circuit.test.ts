// Deliveries waiting for the database wait as one queue (issue 18, point 4): while it is away one
// of them at a time tries, and when it answers they are all stored at once, as many at a time as
// the pool holds; before the first failure is known, no more try at once than the pool holds (issue 25). Independent backoff loops took a pool checkout (or a new connection) per waiting
// delivery per step, and all landed on the pool together when the database came back.
// Real PostgreSQL behind a TCP proxy the test stops and resumes; the shared server is untouched.
// The inbox runs on the test's clock: each probe is fired by the test, and counted exactly.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createReceiver, type ReceiverLogRecord } from '../../src/index.js';
import { createInbox } from '../../src/inbox.js';
import { createSignedRequestSync, createTestEvent } from '../../src/testing/index.js';
import { ManualClock, until, within, type ManualTimer } from '../kit/time.js';
import { behindProxy } from './fixtures/proxied.js';

const ACTION = 'app:budget:auto-shutdown:fired';
const secret = randomBytes(32).toString('hex');
const MAX_WAIT_MS = 20_000;
/** The circuit's probe timer (50 ms doubling to 1 s), the one that does not hold the process open; the deliveries' bounds do. */
const isProbe = (timer: ManualTimer) => !timer.keepAlive;

describe('300 deliveries in flight during an outage', () => {
  it(
    'are held with one probe at a time, then all stored at the first probe after the database comes back',
    { timeout: 40_000 },
    async () => {
      const { db, proxy, database, checkouts } = await behindProxy('pg', 8);
      const clock = new ManualClock();
      const records: ReceiverLogRecord[] = [];
      const inbox = createInbox({ database, table: db.table, storeRetry: { maxWaitMs: MAX_WAIT_MS }, clock });
      const receiver = createReceiver<unknown>({ secrets: secret, inbox, logger: (record) => records.push(record) });

      proxy.stop();
      const ticks = Array.from({ length: 300 }, (_, i) => `circuit-${process.pid}-${i}-${randomBytes(3).toString('hex')}`);
      const answers = ticks.map((tickId) => {
        const request = createSignedRequestSync(createTestEvent(ACTION, { data: { tick_id: tickId } }), { secrets: secret });
        return receiver.receive({ body: request.bytes, headers: request.headers });
      });
      // Not one first attempt each (300 checkouts, issue 25): 8 at once, the pool's size, before the
      // first failure is known; then the first probe's timer, and no attempt without it.
      const probeTimer = () => until(() => clock.live.filter(isProbe).at(0) ?? Promise.reject(new Error('no probe timer set')));
      await probeTimer();
      expect(checkouts()).toBe(8);
      expect(clock.live.filter(isProbe)).toHaveLength(1);

      // While it is away: one probe per backoff step (50 ms doubling to 1 s, each between half and all of its step).
      const steps = [50, 100, 200, 400, 800, 1000, 1000];
      for (const [i, step] of steps.entries()) {
        const timer = await probeTimer();
        expect(timer.ms).toBeGreaterThanOrEqual(step / 2);
        expect(timer.ms).toBeLessThanOrEqual(step);
        clock.fireNext(isProbe);
        await until(() => expect(checkouts()).toBe(8 + i + 1));
      }
      await probeTimer(); // the last probe failed: the next is set, and nothing else tried meanwhile
      expect(checkouts()).toBe(8 + steps.length);

      // Back: the next probe reaches it, and every delivery held goes, 8 at a time, without another timer.
      await proxy.resume();
      clock.fireNext(isProbe);
      const results = await within(Promise.all(answers), 20_000, '300 held deliveries');
      expect(results.map((result) => result.outcome)).toEqual(ticks.map(() => 'accepted'));
      const rows = await db.query<{ tick_id: string }>(`SELECT tick_id FROM ${db.table}`);
      expect(rows.map((row) => row.tick_id).sort()).toEqual([...ticks].sort());
      const ended = records.filter((record) => record.event === 'inbox_outage_ended');
      expect(ended).toHaveLength(1);
      // From the first failure (at 0 on the test's clock) to the probe that reached it.
      expect(ended[0]).toMatchObject({ level: 'info', refused: 0, waited: 300, durationMs: clock.now() });
      expect(clock.now()).toBeLessThan(MAX_WAIT_MS);
    },
  );
});
