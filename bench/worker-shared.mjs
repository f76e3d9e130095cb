// What every process of the worker group shares (bench/worker.mjs starts them): how a case is
// handed over, how it reports, and one clock for all systems. Node built-ins only: the peers'
// processes (bench/peers/) import it from outside the project's package scope.
import { readFileSync } from 'node:fs';

/** The case's settings, as bench/worker.mjs passes them: one JSON argument. */
export function readCase() {
  const config = JSON.parse(process.argv[2] ?? 'null');
  if (config === null || typeof config !== 'object')
    throw new Error('usage: node <case>.mjs <json settings> (bench/worker.mjs starts these)');
  return config;
}

/** The stored events (parsed), as bench/worker.mjs wrote them: the same 1 KiB bodies for every system. */
export function readEvents(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** The one line bench/worker.mjs reads from a case's stdout. */
export function report(result) {
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A counter the no-op handler bumps; `reached(n)` resolves once it has counted n. */
export function handlerCounter() {
  let count = 0;
  let waiting = null;
  return {
    hit(n = 1) {
      count += n;
      if (waiting && count >= waiting.n) {
        waiting.resolve();
        waiting = null;
      }
    },
    get count() {
      return count;
    },
    reached(n) {
      if (count >= n) return Promise.resolve();
      return new Promise((resolve) => (waiting = { n, resolve }));
    },
  };
}

/**
 * With `BENCH_MARK_TIMES=1`, prints `MARK <label> <ns>` on the monotonic clock (`process.hrtime`, the
 * clock of `perf record -k CLOCK_MONOTONIC` and of a `.cpuprofile`), to cut a profile to the timed drain.
 */
export function markTime(label) {
  if (process.env.BENCH_MARK_TIMES) process.stderr.write(`MARK ${label} ${process.hrtime.bigint()}\n`);
}

/**
 * The one clock: from just before `start()` (the worker's start) until `doneCount()` (a query on
 * the system's own tables, from a connection of its own) reads `total`. The database is asked only
 * once the handler has run `total` times, so polling costs the run nothing before its tail; the
 * tail is polled back to back. Gives up at `capSeconds`, reporting the rate of what was done.
 */
export async function timeUntilDone({ start, counter, doneCount, total, capSeconds }) {
  const started = performance.now();
  const deadline = started + capSeconds * 1000;
  markTime('start');
  await start();
  let timer;
  await Promise.race([counter.reached(total), new Promise((resolve) => (timer = setTimeout(resolve, capSeconds * 1000)))]);
  clearTimeout(timer);
  let done = await doneCount();
  while (done < total && performance.now() < deadline) {
    await sleep(1);
    done = await doneCount();
  }
  const elapsedMs = performance.now() - started;
  markTime('end');
  return { done, elapsedMs, perSecond: (done * 1000) / elapsedMs, capped: done < total, handled: counter.count };
}
