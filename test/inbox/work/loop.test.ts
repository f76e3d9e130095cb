import { describe, expect, it } from 'vitest';
import type { Row } from '../../../src/inbox/database/driver.js';
import { WorkerLoop, type Clock, type LoopSteps } from '../../../src/inbox/work/loop.js';
import type { Outcome } from '../../../src/inbox/work/run-delivery.js';

/**
 * The worker loop driven step by step: a clock whose timers fire only when the test says, steps
 * that answer when the test says. No database and no real timer: each state change is observed.
 */

class ManualClock implements Clock {
  readonly timers: { ms: number; fn: () => void; keepAlive: boolean; cancelled: boolean }[] = [];
  after(ms: number, fn: () => void, keepAlive: boolean) {
    const timer = { ms, fn, keepAlive, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }
  get live() {
    return this.timers.filter((t) => !t.cancelled);
  }
  /** Fires the live timers of `ms` (and removes them). */
  fire(ms: number) {
    const due = this.live.filter((t) => t.ms === ms);
    for (const timer of due) {
      timer.cancelled = true;
      timer.fn();
    }
    return due.length;
  }
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

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
    const loop = new WorkerLoop(script.steps, { concurrency: 2, batchSize: 2, pollIntervalMs: 1000 }, new ManualClock());
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
    const loop = new WorkerLoop(script.steps, { concurrency: 1, batchSize: 1, pollIntervalMs: 1000 }, clock);
    loop.start();
    await flush();
    expect(clock.live.map((t) => [t.ms, t.keepAlive])).toEqual([[1000, true]]); // the poll keeps the process alive
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await flush();
    expect(loop.state).toBe('stopping');
    expect(clock.live).toEqual([]);
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
    const loop = new WorkerLoop(script.steps, { concurrency: 1, batchSize: 1, pollIntervalMs: 1000 }, new ManualClock());
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
    const loop = new WorkerLoop(script.steps, { concurrency: 1, batchSize: 1, pollIntervalMs: 1000 }, clock);
    loop.start();
    await flush();
    script.finish('1', { kind: 'failed', retryInMs: 200 });
    await flush();
    expect(clock.live.map((t) => [t.ms, t.keepAlive])).toEqual([
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
    const loop = new WorkerLoop(script.steps, { concurrency: 4, batchSize: 4, pollIntervalMs: 1000 }, clock);
    loop.start();
    await flush();
    script.finish('1', { kind: 'succeeded' });
    script.finish('2', { kind: 'dead' });
    script.finish('3', { kind: 'lease-lost' });
    script.finish('4', { kind: 'unrecorded' });
    await flush();
    expect(clock.live.map((t) => t.ms)).toEqual([1000]);
    await loop.stop();
  });

  it('a claim the database refused is not retried in a hot loop: the next poll tries again', async () => {
    const clock = new ManualClock();
    const script = scriptedSteps(rows('1'));
    script.failClaims(true);
    const loop = new WorkerLoop(script.steps, { concurrency: 1, batchSize: 1, pollIntervalMs: 1000 }, clock);
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
    const loop = new WorkerLoop(script.steps, { concurrency: 2, batchSize: 2, pollIntervalMs: 1000 }, new ManualClock());
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
});
