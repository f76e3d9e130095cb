import { describe, expect, it } from 'vitest';
import type { Row } from '../../../src/inbox/database/driver.js';
import { WorkerLoop, type LoopSteps } from '../../../src/inbox/work/loop.js';
import type { Outcome } from '../../../src/inbox/work/run-delivery.js';
import { deferred, flush, ManualClock } from '../../kit/time.js';

/**
 * The worker loop driven step by step: a clock whose timers fire only when the test says, steps
 * that answer when the test says. No database and no real timer: each state change is observed.
 */

/** Steps whose claims hand out `queue` and whose runs wait until the test finishes them. */
function scriptedSteps(queue: Row[]) {
  const log: string[] = [];
  const runs = new Map<string, (outcome: Outcome) => void>();
  let claimFails = false;
  const steps: LoopSteps = {
    async claim(wanted) {
      log.push(`claim ${wanted}`);
      if (claimFails) return undefined;
      return queue.splice(0, wanted);
    },
    run(row) {
      log.push(`run ${String(row['id'])}`);
      const done = deferred<Outcome>();
      runs.set(String(row['id']), done.resolve);
      return done.promise;
    },
    async release(row) {
      log.push(`release ${String(row['id'])}`);
    },
    async recover() {
      log.push('recover');
    },
    beforePoll() {},
  };
  return {
    steps,
    log,
    finish(id: string, outcome: Outcome = { kind: 'succeeded' }) {
      runs.get(id)!(outcome);
      runs.delete(id);
    },
    failClaims(fails: boolean) {
      claimFails = fails;
    },
  };
}

const rows = (...ids: string[]) => ids.map((id) => ({ id }));

describe('the worker loop, step by step', () => {
  it('fills its slots with one claim per batch, and claims again when a slot frees', async () => {
    const script = scriptedSteps(rows('1', '2', '3', '4', '5'));
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 2, batchSize: 2, claimAhead: 0, pollIntervalMs: 1000, leaseSeconds: 30 },
      new ManualClock(),
    );
    loop.start();
    await flush();
    expect(script.log).toEqual(['recover', 'claim 2', 'run 1', 'run 2']);
    expect(loop.running).toBe(2);
    script.finish('1');
    await flush();
    expect(script.log.slice(4)).toEqual(['claim 1', 'run 3']);
    expect(loop.state).toBe('running');
  });

  it('stop(): claims nothing more, cancels every timer, and resolves only when the running handler ends', async () => {
    const clock = new ManualClock();
    const script = scriptedSteps(rows('1'));
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 1, batchSize: 1, claimAhead: 0, pollIntervalMs: 1000, leaseSeconds: 30 },
      clock,
    );
    loop.start();
    await flush();
    expect(clock.live().map((t) => [t.ms, t.keepAlive])).toEqual([[1000, true]]); // the poll keeps the process alive
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await flush();
    expect(loop.state).toBe('stopping');
    expect(clock.live()).toEqual([]);
    expect(stopped).toBe(false);
    script.finish('1');
    await stopping;
    expect(loop.state).toBe('stopped');
    expect(script.log).toEqual(['recover', 'claim 1', 'run 1']); // no claim after the slot freed
  });

  it('a row claimed while stop() came is released, never run', async () => {
    const script = scriptedSteps(rows('1'));
    const gate = deferred<void>();
    const claim = script.steps.claim.bind(script.steps);
    script.steps.claim = async (wanted) => {
      await gate.promise;
      return claim(wanted);
    };
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 1, batchSize: 1, claimAhead: 0, pollIntervalMs: 1000, leaseSeconds: 30 },
      new ManualClock(),
    );
    loop.start();
    await flush();
    const stopping = loop.stop();
    gate.resolve();
    await stopping;
    expect(script.log).toEqual(['recover', 'claim 1', 'release 1']);
    expect(loop.state).toBe('stopped');
  });

  it("failed: a wake-up is set for when the retry is due (unref'd), and it claims then", async () => {
    const clock = new ManualClock();
    const script = scriptedSteps(rows('1'));
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 1, batchSize: 1, claimAhead: 0, pollIntervalMs: 1000, leaseSeconds: 30 },
      clock,
    );
    loop.start();
    await flush();
    script.finish('1', { kind: 'failed', retryInMs: 200 });
    await flush();
    expect(clock.live().map((t) => [t.ms, t.keepAlive])).toEqual([
      [1000, true],
      [205, false],
    ]);
    script.log.length = 0;
    expect(clock.fire(205)).toBe(1);
    await flush();
    expect(script.log).toEqual(['claim 1']);
  });

  it('succeeded, dead, lease-lost and unrecorded set no timer', async () => {
    const clock = new ManualClock();
    const script = scriptedSteps(rows('1', '2', '3', '4'));
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 4, batchSize: 4, claimAhead: 0, pollIntervalMs: 1000, leaseSeconds: 30 },
      clock,
    );
    loop.start();
    await flush();
    script.finish('1', { kind: 'succeeded' });
    script.finish('2', { kind: 'dead' });
    script.finish('3', { kind: 'lease-lost' });
    script.finish('4', { kind: 'unrecorded' });
    await flush();
    expect(clock.live().map((t) => t.ms)).toEqual([1000]);
    await loop.stop();
  });

  it('a claim the database refused is not retried in a hot loop: the next poll tries again', async () => {
    const clock = new ManualClock();
    const script = scriptedSteps(rows('1'));
    script.failClaims(true);
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 1, batchSize: 1, claimAhead: 0, pollIntervalMs: 1000, leaseSeconds: 30 },
      clock,
    );
    loop.start();
    await flush();
    void loop.wake();
    await flush();
    expect(script.log).toEqual(['recover', 'claim 1', 'claim 1']); // one per wake-up, none by itself
    script.failClaims(false);
    clock.fire(1000);
    await flush();
    expect(script.log.slice(3)).toEqual(['recover', 'claim 1', 'run 1']);
    script.finish('1');
    await loop.stop();
  });

  it('whenIdle() resolves once the last handler ended and no claim runs', async () => {
    const script = scriptedSteps(rows('1', '2'));
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 2, batchSize: 2, claimAhead: 0, pollIntervalMs: 1000, leaseSeconds: 30 },
      new ManualClock(),
    );
    loop.start();
    await flush();
    let idle = false;
    void loop.whenIdle().then(() => (idle = true));
    script.finish('1');
    await flush();
    expect(idle).toBe(false);
    script.finish('2');
    await flush();
    expect(idle).toBe(true);
    await loop.stop();
  });

  it('claim-ahead: holds up to claimAhead rows beyond the slots, starts one the moment a slot frees, refills once half is used', async () => {
    const script = scriptedSteps(rows('1', '2', '3', '4', '5', '6', '7', '8', '9', '10'));
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 2, batchSize: 4, claimAhead: 4, pollIntervalMs: 1000, leaseSeconds: 30 },
      new ManualClock(),
    );
    loop.start();
    await flush();
    // 4 rows for the 2 slots and 2 ahead, then 2 more: 4 held beyond the slots.
    expect(script.log).toEqual(['recover', 'claim 4', 'run 1', 'run 2', 'claim 2']);
    expect(loop.running).toBe(2);
    // Held claims do not count as idle work done: whenIdle waits for them.
    let idle = false;
    void loop.whenIdle().then(() => (idle = true));
    script.log.length = 0;
    script.finish('1');
    await flush();
    // The next held row starts at once; one row of room is less than half of 4: no claim yet.
    expect(script.log).toEqual(['run 3']);
    script.finish('2');
    await flush();
    // Two rows of room now: one claim refills both.
    expect(script.log).toEqual(['run 3', 'run 4', 'claim 2']);
    expect(idle).toBe(false);
    const stopping = loop.stop();
    await flush();
    script.finish('3');
    script.finish('4');
    await stopping;
    expect(script.log.slice(3)).toEqual(['release 5', 'release 6', 'release 7', 'release 8']);
    expect(idle).toBe(true);
  });

  it('a slot that frees during a claim starts a held row without waiting for that claim', async () => {
    const script = scriptedSteps(rows('1', '2', '3', '4', '5', '6'));
    const gate = deferred<void>();
    let gated = false;
    const claim = script.steps.claim.bind(script.steps);
    script.steps.claim = async (wanted) => {
      if (gated) {
        script.log.push('claim hangs');
        await gate.promise;
      }
      return claim(wanted);
    };
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 1, batchSize: 1, claimAhead: 2, pollIntervalMs: 1000, leaseSeconds: 30 },
      new ManualClock(),
    );
    loop.start();
    await flush();
    expect(script.log).toEqual(['recover', 'claim 1', 'run 1', 'claim 1', 'claim 1']);
    gated = true;
    script.finish('1'); // the held row 2 starts, and a refill claim starts and hangs
    await flush();
    expect(script.log.slice(5)).toEqual(['run 2', 'claim hangs']);
    script.finish('2'); // the held row 3 starts while that claim still hangs
    await flush();
    expect(script.log.slice(7)).toEqual(['run 3']);
    const stopping = loop.stop();
    gate.resolve();
    await flush();
    script.finish('3');
    await stopping;
    expect(script.log.slice(8)).toEqual(['claim 1', 'release 4']); // what the hanging claim took, given back
  });

  it('stop() gives back the rows claimed ahead, never runs them, and waits for the running handler', async () => {
    const script = scriptedSteps(rows('1', '2', '3'));
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 1, batchSize: 3, claimAhead: 2, pollIntervalMs: 1000, leaseSeconds: 30 },
      new ManualClock(),
    );
    loop.start();
    await flush();
    expect(script.log).toEqual(['recover', 'claim 3', 'run 1']);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await flush();
    expect(script.log.slice(3)).toEqual(['release 2', 'release 3']);
    expect(stopped).toBe(false);
    script.finish('1');
    await stopping;
    expect(loop.state).toBe('stopped');
    expect(script.log.slice(3)).toEqual(['release 2', 'release 3']);
  });

  it('a row held ahead until its lease is half gone is given back, not started', async () => {
    const clock = new ManualClock();
    const script = scriptedSteps(rows('1', '2'));
    // A lease of 30 s: a held row is stale 15 s after its claim.
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 1, batchSize: 2, claimAhead: 1, pollIntervalMs: 1000, leaseSeconds: 30 },
      clock,
    );
    loop.start();
    await flush();
    expect(script.log).toEqual(['recover', 'claim 2', 'run 1']);
    clock.advance(15_001);
    script.finish('1');
    await flush();
    expect(script.log.slice(3, 5)).toEqual(['release 2', 'claim 2']); // given back, then room to claim again
    expect(script.log).not.toContain('run 2');
    await loop.stop();
    expect(loop.state).toBe('stopped');
  });

  it('a held row goes back once half its lease is gone even while every slot stays busy (a timer, not a free slot)', async () => {
    const clock = new ManualClock();
    const script = scriptedSteps(rows('1', '2'));
    // A lease of 30 s: the held row is stale 15 s after its claim; its timer is set for just past that.
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 1, batchSize: 2, claimAhead: 1, pollIntervalMs: 1000, leaseSeconds: 30 },
      clock,
    );
    loop.start();
    await flush();
    expect(script.log).toEqual(['recover', 'claim 2', 'run 1']);
    expect(clock.live(15_001)).toHaveLength(1); // besides the poll's 1000
    clock.advance(15_000);
    clock.fire(15_001); // fired a hair early, by this clock: the row is not stale yet, so it stays held
    await flush();
    expect(script.log).not.toContain('release 2');
    expect(clock.live(1)).toHaveLength(1); // the next look, 1 ms on
    clock.advance(1);
    clock.fire(1);
    await flush();
    expect(script.log).toContain('release 2'); // handler 1 still runs: the slot never freed
    expect(script.log).not.toContain('run 2');
    expect(loop.running).toBe(1);
    const stopping = loop.stop();
    script.finish('1');
    await stopping;
  });

  it('a second stop() during the first waits for the held rows to be given back', async () => {
    const script = scriptedSteps(rows('1', '2'));
    const gate = deferred<void>();
    const release = script.steps.release.bind(script.steps);
    script.steps.release = async (row) => {
      await gate.promise;
      await release(row);
    };
    const loop = new WorkerLoop(
      script.steps,
      { concurrency: 1, batchSize: 2, claimAhead: 1, pollIntervalMs: 1000, leaseSeconds: 30 },
      new ManualClock(),
    );
    loop.start();
    await flush();
    expect(script.log).toEqual(['recover', 'claim 2', 'run 1']); // row 2 held
    let firstDone = false;
    let secondDone = false;
    const first = loop.stop().then(() => (firstDone = true));
    await flush();
    const second = loop.stop().then(() => (secondDone = true));
    script.finish('1');
    await flush();
    expect([firstDone, secondDone]).toEqual([false, false]); // row 2's release is still under way
    gate.resolve();
    await Promise.all([first, second]);
    expect(script.log.slice(3)).toEqual(['release 2']);
    expect(loop.state).toBe('stopped');
  });
});
