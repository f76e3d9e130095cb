import { describe, expect, it } from 'vitest';
import { scriptedLoop } from '../../kit/loop.js';
import { flush } from '../../kit/time.js';

/**
 * The worker loop driven step by step (test/kit/loop.ts): a clock whose timers fire only when the
 * test says, steps that answer when the test says. No database and no real timer: each state
 * change is observed.
 */

describe('the worker loop, step by step', () => {
  it('fills its slots with one claim per batch, and claims again when a slot frees', async () => {
    const script = scriptedLoop(['1', '2', '3', '4', '5'], { concurrency: 2, batchSize: 2 });
    await script.start();
    expect(script.log).toEqual(['recover', 'claim 2', 'run 1', 'run 2']);
    expect(script.loop.running).toBe(2);
    script.finish('1');
    await flush();
    expect(script.log.slice(4)).toEqual(['claim 1', 'run 3']);
    expect(script.loop.state).toBe('running');
  });

  it('stop(): claims nothing more, cancels every timer, and resolves only when the running handler ends', async () => {
    const { loop, clock, ...script } = scriptedLoop(['1']);
    await script.start();
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

  it('an attempt that hands over frees its slot for the next held row; stop() still waits for its outcome to be recorded', async () => {
    const { loop, ...script } = scriptedLoop(['1', '2', '3'], { batchSize: 3, claimAhead: 2 });
    await script.start();
    expect(script.log).toEqual(['recover', 'claim 3', 'run 1']); // 1 running, 2 and 3 held
    script.handOver('1'); // its COMMIT held, or its outcome queued: the slot goes on
    expect(script.log.slice(3)).toEqual(['run 2', 'claim 1']); // half the claim-ahead used: a refill
    expect(loop.running).toBe(1);
    expect(loop.idle).toBe(false);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await flush();
    expect(script.log).toContain('release 3');
    script.finish('2');
    await flush();
    expect(stopped).toBe(false); // attempt 1's outcome is not recorded yet
    script.finish('1');
    await stopping;
    expect(loop.idle).toBe(true);
  });

  it('renews, every third of a lease, the leases of every row held (queued and running), and stop() waits for the renewal under way', async () => {
    const { loop, clock, ...script } = scriptedLoop(['1', '2', '3'], { batchSize: 3, claimAhead: 2 }, true);
    const renewed = script.hold('renew');
    await script.start();
    script.finish('1');
    await flush();
    expect(clock.fire(10_000)).toBe(1);
    expect(script.log.filter((line) => line.startsWith('renew'))).toEqual(['renew 3,2']);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    script.finish('2');
    await flush();
    expect(stopped).toBe(false); // the renewal is a write under way
    renewed();
    await stopping;
    expect(clock.live).toEqual([]);
  });

  it('a row claimed while stop() came is released, never run', async () => {
    const { loop, ...script } = scriptedLoop(['1']);
    const claimed = script.hold('claim');
    await script.start();
    const stopping = loop.stop();
    claimed();
    await stopping;
    expect(script.log).toEqual(['recover', 'claim 1', 'release 1']);
    expect(loop.state).toBe('stopped');
  });

  it("failed: a wake-up is set for when the retry is due (unref'd), and it claims then", async () => {
    const { clock, ...script } = scriptedLoop(['1']);
    await script.start();
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
    const { loop, clock, ...script } = scriptedLoop(['1', '2', '3', '4'], { concurrency: 4, batchSize: 4 });
    await script.start();
    script.finish('1', { kind: 'succeeded' });
    script.finish('2', { kind: 'dead' });
    script.finish('3', { kind: 'lease-lost' });
    script.finish('4', { kind: 'unrecorded' });
    await flush();
    expect(clock.live.map((t) => t.ms)).toEqual([1000]);
    await loop.stop();
  });

  it('a claim the database refused is not retried in a hot loop: the next poll tries again', async () => {
    const { loop, clock, ...script } = scriptedLoop(['1']);
    script.failClaims(true);
    await script.start();
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
    const { loop, ...script } = scriptedLoop(['1', '2'], { concurrency: 2, batchSize: 2 });
    await script.start();
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
    const ids = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'];
    const { loop, ...script } = scriptedLoop(ids, { concurrency: 2, batchSize: 4, claimAhead: 4 });
    await script.start();
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
    const { loop, ...script } = scriptedLoop(['1', '2', '3', '4', '5', '6'], { claimAhead: 2 });
    await script.start();
    expect(script.log).toEqual(['recover', 'claim 1', 'run 1', 'claim 1', 'claim 1']);
    const claimed = script.hold('claim');
    script.finish('1'); // the held row 2 starts, and a refill claim starts and hangs
    await flush();
    expect(script.log.slice(5)).toEqual(['run 2', 'claim 1']);
    script.finish('2'); // the held row 3 starts while that claim still hangs
    await flush();
    expect(script.log.slice(7)).toEqual(['run 3']);
    const stopping = loop.stop();
    claimed();
    await flush();
    script.finish('3');
    await stopping;
    expect(script.log.slice(8)).toEqual(['release 4']); // what the hanging claim took, given back
  });

  it('stop() gives back the rows claimed ahead, never runs them, and waits for the running handler', async () => {
    const { loop, ...script } = scriptedLoop(['1', '2', '3'], { batchSize: 3, claimAhead: 2 });
    await script.start();
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
    // A lease of 4 ms: a held row is stale 2 ms after its claim.
    const { loop, clock, ...script } = scriptedLoop(['1', '2'], { batchSize: 2, claimAhead: 1, leaseSeconds: 0.004 });
    await script.start();
    expect(script.log).toEqual(['recover', 'claim 2', 'run 1']);
    clock.pass(10);
    script.finish('1');
    await flush();
    expect(script.log.slice(3, 5)).toEqual(['release 2', 'claim 2']); // given back, then room to claim again
    expect(script.log).not.toContain('run 2');
    await loop.stop();
    expect(loop.state).toBe('stopped');
  });

  it('a held row goes back once half its lease is gone even while every slot stays busy (a timer, not a free slot)', async () => {
    // A lease of 4 ms: the held row is stale 2 ms after its claim; the timer is set for about 3 ms.
    const { loop, clock, ...script } = scriptedLoop(['1', '2'], { batchSize: 2, claimAhead: 1, leaseSeconds: 0.004 });
    await script.start();
    expect(script.log).toEqual(['recover', 'claim 2', 'run 1']);
    const staleTimer = clock.live.find((t) => t.ms <= 4); // the poll's is 1000
    expect(staleTimer).toBeDefined();
    clock.pass(10);
    clock.fire(staleTimer!.ms);
    await flush();
    expect(script.log).toContain('release 2'); // handler 1 still runs: the slot never freed
    expect(script.log).not.toContain('run 2');
    expect(loop.running).toBe(1);
    const stopping = loop.stop();
    script.finish('1');
    await stopping;
  });

  it('a second stop() during the first waits for the held rows to be given back', async () => {
    const { loop, ...script } = scriptedLoop(['1', '2'], { batchSize: 2, claimAhead: 1 });
    const given = script.hold('release');
    await script.start();
    expect(script.log).toEqual(['recover', 'claim 2', 'run 1']); // row 2 held
    let firstDone = false;
    let secondDone = false;
    const first = loop.stop().then(() => (firstDone = true));
    await flush();
    const second = loop.stop().then(() => (secondDone = true));
    script.finish('1');
    await flush();
    expect([firstDone, secondDone]).toEqual([false, false]); // row 2's release is still under way
    given();
    await Promise.all([first, second]);
    expect(script.log.slice(3)).toEqual(['release 2']);
    expect(loop.state).toBe('stopped');
  });
});

describe('the worker loop: its states', () => {
  it('goes created -> running -> stopping -> stopped, and refuses every other transition', async () => {
    const { loop, ...script } = scriptedLoop(['1']);
    expect(loop.state).toBe('created');
    await loop.wake(); // nothing claimed before start()
    expect(script.log).toEqual([]);
    loop.start();
    expect(loop.state).toBe('running');
    expect(() => loop.start()).toThrow('worker loop: no transition from running to running');
    await flush();
    const stopping = loop.stop();
    expect(loop.state).toBe('stopping');
    expect(() => loop.start()).toThrow('worker loop: no transition from stopping to running');
    script.finish('1');
    await stopping;
    expect(loop.state).toBe('stopped');
    expect(() => loop.start()).toThrow('worker loop: no transition from stopped to running');
    await loop.stop(); // a second stop() is no transition: it resolves
    expect(loop.state).toBe('stopped');
  });

  it('stop() before start(): created -> stopped, nothing claimed, no timer', async () => {
    const { loop, clock, log } = scriptedLoop(['1']);
    await loop.stop();
    expect(loop.state).toBe('stopped');
    expect(() => loop.start()).toThrow('worker loop: no transition from stopped to running');
    expect(log).toEqual([]);
    expect(clock.live).toEqual([]);
  });

  it('stop({ timeoutMs }): handlers that end in time are waited for, their signal never aborted, the timer cancelled', async () => {
    const { loop, clock, ...script } = scriptedLoop(['1']);
    await script.start();
    const stopping = loop.stop({ timeoutMs: 250 });
    await flush();
    expect(clock.live.map((t) => [t.ms, t.keepAlive])).toEqual([[250, true]]); // stop()'s caller waits on it
    script.finish('1');
    await stopping;
    expect(script.signals.get('1')!.aborted).toBe(false);
    expect(clock.live).toEqual([]);
    expect(script.log.filter((line) => line.startsWith('abandon'))).toEqual([]);
  });

  it('stop({ timeoutMs }): past it, aborts context.signal, abandons the running row in one call, and returns; held rows given back first', async () => {
    const { loop, clock, ...script } = scriptedLoop(['1', '2'], { batchSize: 2, claimAhead: 1 });
    await script.start();
    expect(script.log).toEqual(['recover', 'claim 2', 'run 1']); // row 2 held
    let stopped = false;
    const stopping = loop.stop({ timeoutMs: 250 }).then(() => (stopped = true));
    await flush();
    expect(stopped).toBe(false);
    expect(script.signals.get('1')!.aborted).toBe(false);
    expect(clock.fire(250)).toBe(1);
    await stopping;
    const signal = script.signals.get('1')!;
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('AbortError');
    expect((signal.reason as DOMException).message).toBe("the worker stopped: its handlers outlived stop()'s timeoutMs (250 ms)");
    expect(script.log.slice(3)).toEqual(['release 2', 'abandon 1']); // row 1 is not given back: its handler may still write
    expect(loop.state).toBe('stopped');
    expect(loop.running).toBe(1);
    script.finish('1'); // ends late: nothing more is claimed or started
    await flush();
    expect(script.log.slice(5)).toEqual([]);
    expect(loop.running).toBe(0);
  });

  it('stop() waits for the stale rows it gave back, in either completion mode (the batched stop() regression)', async () => {
    const { loop, clock, ...script } = scriptedLoop(['1', '2', '3'], { batchSize: 3, claimAhead: 2 });
    const given = script.hold('release');
    await script.start();
    expect(script.log).toEqual(['recover', 'claim 3', 'run 1']);
    clock.pass(15_001); // rows 2 and 3: half their lease of 30 s gone
    script.finish('1'); // the slot frees: the stale rows go back instead of starting
    await flush();
    expect(script.log).not.toContain('run 2');
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await flush();
    expect(stopped).toBe(false); // their release is still under way
    given();
    await stopping;
    expect(script.log.filter((line) => line.startsWith('release'))).toEqual(['release 2', 'release 3']);
  });
});
