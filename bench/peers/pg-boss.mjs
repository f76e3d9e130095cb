// One pg-boss case of the worker group (bench/worker.mjs starts it on Node 22): start pg-boss on a
// fresh schema, store the events as jobs (untimed, one insert), then time one `work()` from its call
// until every job of the queue is completed. `way: 'warm'`: after a warm-up on the first events;
// `way: 'cold'`: no warm-up, the jobs stored by one PgBoss, worked by a new one (its own new pool,
// started untimed: pg-boss checks its schema in start()).
import { PgBoss } from 'pg-boss';
import pg from 'pg';
import { handlerCounter, readCase, readEvents, report, timeUntilDone } from '../worker-shared.mjs';

const { url, schema, eventsFile, warm, total, capSeconds, options, way = 'warm' } = readCase();
const events = readEvents(eventsFile);
const QUEUE = 'noop';

const newBoss = () => {
  const made = new PgBoss({ connectionString: url, schema });
  made.on('error', (error) => (failure ??= error)); // a worker's error ends the case, after the clock
  return made;
};
let failure;
let boss = newBoss();
const watcher = new pg.Client({ connectionString: url });
await watcher.connect();
try {
  await boss.start();
  await boss.createQueue(QUEUE);
  const completed = async () =>
    (await watcher.query(`SELECT count(*)::int AS n FROM "${schema}".job WHERE name = $1 AND state = 'completed'`, [QUEUE])).rows[0].n;
  const store = async (from, to) => {
    const ids = await boss.insert(
      QUEUE,
      events.slice(from, to).map((data) => ({ data })),
    );
    if (ids !== null && ids.length !== to - from) throw new Error(`pg-boss: expected ${to - from} jobs stored, got ${ids.length}`);
  };

  const runOnce = async (before, count) => {
    const counter = handlerCounter();
    let workId;
    const result = await timeUntilDone({
      start: async () => {
        // The handler gets a batch (an array of up to batchSize jobs); pg-boss completes the batch when it resolves.
        workId = await boss.work(QUEUE, options, async (jobs) => counter.hit(jobs.length));
      },
      counter,
      total: count,
      doneCount: async () => (await completed()) - before,
      capSeconds,
    });
    await boss.offWork(QUEUE, { id: workId, wait: true });
    if (failure) throw failure;
    return result;
  };

  if (way === 'cold') {
    await store(0, total);
    await boss.stop({ graceful: false, close: true });
    boss = newBoss();
    await boss.start();
    report(await runOnce(0, total));
  } else {
    await store(0, warm);
    await runOnce(0, warm); // warm-up: JIT, the pool's connections, the queue's cache
    await store(warm, warm + total);
    report(await runOnce(warm, total));
  }
} finally {
  await boss.stop({ graceful: false, close: true });
  await watcher.end();
}
