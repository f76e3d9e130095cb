import { describe, expect, it } from 'vitest';
import type { Row } from '../../../src/inbox/database/driver.js';
import { BatchLoop, type BatchSteps } from '../../../src/inbox/work/batch.js';
import type { Completion } from '../../../src/inbox/work/run-batched.js';
import type { Claimed } from '../../../src/inbox/work/run-delivery.js';
import { deferred, flush as flushOnce, ManualClock } from '../../kit/time.js';

/**
 * mode: 'batched''s loop driven step by step: a clock whose timers fire only when the test says,
 * steps that answer when the test says. No database, no real timer.
 */

// A batch's completion crosses a few promise hops before the loop acts on it.
const flush = () => flushOnce(5);

const rows = (...ids: number[]): Row[] => ids.map((id) => ({ id: String(id), attempts: 1 }));
const LEASE_SECONDS = 30;

function harness(options: { concurrency: number; batchSize: number }) {
  const claims: { wanted: number; answer: (rows: Row[]) => void }[] = [];
  const runs = new Map<string, (state: Completion['state'], delayMs?: number) => void>();
  const completes: string[][] = [];
  const released: string[][] = [];
  const renewed: string[][] = [];
  let recordNothing = false;
  const steps: BatchSteps = {
    claim(wanted) {
      const { promise, resolve } = deferred<Row[]>();
      claims.push({ wanted, answer: resolve });
      return promise;
    },
    toClaimed: (row) => ({
      id: String(row['id']),
      attempt: 1,
      budgetUsed: 1,
      body: new Uint8Array(),
      replayed: false,
      action: undefined,
      app: undefined,
      traceContext: undefined,
    }),
    run(claimed: Claimed) {
      return new Promise<Completion>((resolve) =>
        runs.set(claimed.id, (state, delayMs = 0) => resolve({ claimed, state, delayMs, error: null, settle: async () => {} })),
      );
    },
    async complete(list) {
      completes.push(list.map((c) => c.claimed.id));
      return recordNothing ? new Set() : new Set(list.map((c) => c.claimed.id));
    },
    async release(list) {
      released.push(list.map((c) => c.id));
    },
    async renew(ids) {
      renewed.push([...ids]);
      return true;
    },
    recover: async () => {},
    beforePoll: () => {},
  };
  const clock = new ManualClock();
  const loop = new BatchLoop(steps, { ...options, pollIntervalMs: 1000, leaseSeconds: LEASE_SECONDS }, clock);
  return {
    loop,
    clock,
    claims,
    runs,
    completes,
    released,
    renewed,
    recordNothing: () => (recordNothing = true),
  };
}

describe("mode: 'batched''s loop", () => {
  it('claims a batch ahead, runs concurrency at a time, refills at half, and records what finished in one statement', async () => {
    const h = harness({ concurrency: 2, batchSize: 6 });
    h.loop.start();
    await flush();
    expect(h.claims.map((c) => c.wanted)).toEqual([6]);
    h.claims[0]!.answer(rows(1, 2, 3, 4, 5, 6));
    await flush();
    expect([...h.runs.keys()]).toEqual(['1', '2']); // two slots
    expect(h.loop.running).toBe(6);
    h.runs.get('1')!('done');
    h.runs.get('2')!('done');
    await flush();
    expect(h.completes.flat().sort()).toEqual(['1', '2']);
    expect([...h.runs.keys()]).toEqual(['1', '2', '3', '4']);
    // When the first slot freed, 3 was started and 3 stayed queued: half of 6, so a claim for the other 3.
    expect(h.claims.map((c) => c.wanted)).toEqual([6, 3]);
    h.claims[1]!.answer(rows(7, 8, 9));
    await flush();
    expect(h.loop.running).toBe(7); // 3 and 4 running, 5 to 9 queued
  });

  it('a retried outcome that was recorded sets a wake-up for when it is due; one not recorded sets none', async () => {
    const h = harness({ concurrency: 2, batchSize: 2 });
    h.loop.start();
    await flush();
    h.claims[0]!.answer(rows(1));
    await flush();
    h.runs.get('1')!('pending', 60_000);
    await flush();
    expect(h.clock.live(60_005)).toHaveLength(1);

    const lost = harness({ concurrency: 2, batchSize: 2 });
    lost.recordNothing();
    lost.loop.start();
    await flush();
    lost.claims[0]!.answer(rows(1));
    await flush();
    lost.runs.get('1')!('pending', 60_000);
    await flush();
    expect(lost.completes).toEqual([['1']]);
    expect(lost.clock.live(60_005)).toHaveLength(0);
  });

  it('renews, every third of a lease, the leases of every row held: queued and running, not finished', async () => {
    const h = harness({ concurrency: 1, batchSize: 3 });
    h.loop.start();
    await flush();
    h.claims[0]!.answer(rows(1, 2, 3));
    await flush();
    h.runs.get('1')!('done');
    await flush();
    expect(h.clock.fire((LEASE_SECONDS * 1000) / 3)).toBe(1);
    await flush();
    expect(h.renewed).toEqual([['2', '3']]);
    expect(h.clock.live((LEASE_SECONDS * 1000) / 3)).toHaveLength(1); // the next renewal
  });

  it('stop(): gives the queue back unstarted, waits for the running handler, records it, and leaves no timer', async () => {
    const h = harness({ concurrency: 1, batchSize: 4 });
    h.loop.start();
    await flush();
    h.claims[0]!.answer(rows(1, 2, 3, 4));
    await flush();
    expect([...h.runs.keys()]).toEqual(['1']);
    let stopped = false;
    const stopping = h.loop.stop().then(() => (stopped = true));
    await flush();
    expect(h.released).toEqual([['2', '3', '4']]);
    expect(stopped).toBe(false);
    h.runs.get('1')!('done');
    await stopping;
    expect(h.completes).toEqual([['1']]);
    expect([...h.runs.keys()]).toEqual(['1']);
    expect(h.loop.state).toBe('stopped');
    expect(h.loop.running).toBe(0);
    expect(h.clock.timers.filter((t) => !t.cancelled)).toEqual([]);
  });
});
