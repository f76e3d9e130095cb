// One graphile-worker case of the worker group (bench/worker.mjs starts it on Node 22): migrate a
// fresh schema, store the events as jobs (untimed), then time a no-op task until its jobs table is
// empty (graphile-worker deletes a completed job). `way: 'warm'`: a runner (`run()`) warmed up on
// the first events first; `way: 'cold'`: `runOnce()` with no warm-up (its own new pool), from its
// call until it resolves with the queue empty.
import { EventEmitter } from 'node:events';
import { Logger, makeWorkerUtils, run, runOnce } from 'graphile-worker';
import pg from 'pg';
import { handlerCounter, markTime, readCase, readEvents, report, timeUntilDone } from '../worker-shared.mjs';

const { url, schema, eventsFile, warm, total, capSeconds, options, way = 'warm' } = readCase();
const events = readEvents(eventsFile);
// Silent: by default graphile-worker logs a line per completed job, and neither other system logs
// per delivery. Nothing else of its defaults is changed.
const logger = new Logger(() => () => {});
// run() takes localQueue and completeJobBatchDelay only inside `preset.worker`; at the top level it
// warns "Do not know how to convert config option" and ignores them. A case that misspells an
// option fails instead of measuring the defaults under another name.
const warn = console.warn;
console.warn = (...args) => {
  if (String(args[0]).includes('Do not know how to convert config option')) throw new Error(`graphile-worker: ${args.join(' ')}`);
  warn(...args);
};
const workerEvents = new EventEmitter();
let localQueues = 0;
workerEvents.on('localQueue:init', () => localQueues++);
const watcher = new pg.Client({ connectionString: url });
await watcher.connect();
const utils = await makeWorkerUtils({ connectionString: url, schema, logger });
try {
  await utils.migrate();
  const jobsTable = `"${schema}"._private_jobs`;
  const left = async () => (await watcher.query(`SELECT count(*)::int AS n FROM ${jobsTable}`)).rows[0].n;
  const store = async (from, to) => {
    await utils.addJobs(events.slice(from, to).map((payload) => ({ identifier: 'noop', payload })));
    if ((await left()) !== to - from) throw new Error(`graphile-worker: expected ${to - from} jobs stored`);
  };

  // The same settings for run() (warm) and runOnce() (cold): its own pool, as by default (maxPoolSize 10).
  const settings = (counter) => ({
    ...options,
    connectionString: url,
    schema,
    logger,
    events: workerEvents,
    noHandleSignals: true,
    taskList: { noop: async () => counter.hit() },
  });

  const timeRun = async (count) => {
    const counter = handlerCounter();
    let runner;
    const result = await timeUntilDone({
      start: async () => {
        // Its own pool, as by default (maxPoolSize 10), from the connection string.
        runner = await run(settings(counter));
      },
      counter,
      total: count,
      doneCount: async () => count - (await left()),
      capSeconds,
    });
    await runner.stop();
    return result;
  };

  const timeRunOnce = async (count) => {
    const counter = handlerCounter();
    const started = performance.now();
    markTime('start');
    await runOnce(settings(counter));
    // runOnce can resolve with its last completions still on their way: the clock runs until the table is empty.
    let done = count - (await left());
    while (done < count && performance.now() < started + capSeconds * 1000) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      done = count - (await left());
    }
    const elapsedMs = performance.now() - started;
    markTime('end');
    if (done !== count) throw new Error(`graphile-worker: ${count - done} jobs left ${capSeconds} s after runOnce began`);
    return { done, elapsedMs, perSecond: (done * 1000) / elapsedMs, capped: false, handled: counter.count };
  };

  let result;
  if (way === 'cold') {
    await store(0, total);
    result = await timeRunOnce(total);
  } else {
    await store(0, warm);
    await timeRun(warm); // warm-up: JIT, prepared statements, the pool's connections
    await store(warm, warm + total);
    result = await timeRun(total);
  }
  if (Boolean(options.preset?.worker?.localQueue) !== localQueues > 0)
    throw new Error(
      `graphile-worker: localQueue asked for: ${Boolean(options.preset?.worker?.localQueue)}, local queues started: ${localQueues}`,
    );
  report({ ...result, localQueues });
} finally {
  await utils.release();
  await watcher.end();
}
