// One rack-webhooks case of the worker group (bench/worker.mjs starts it, on the same Node as the
// peers): migrate an inbox in a fresh schema, store the events by receiving them as signed
// deliveries (untimed), then time `inbox.work()` with a no-op handler from its start until every
// delivery is done: `way: 'warm'` after a warm-up worker on the first events, in the same pool;
// `way: 'cold'` with no warm-up, from a pool and an inbox made after storing (no connection open,
// no statement prepared). Or, for the reference rows, the worker's own statements replayed on the
// same stored rows (bench/inbox-floors.mjs).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createReceiver } from 'rack-webhooks';
import { createInbox } from 'rack-webhooks/inbox';
import { createSignedRequestSync } from 'rack-webhooks/testing';
import { checkWorkerStatements, pgbenchWorkerFloor, replayBatchedStatements, replayWorkerStatements } from './inbox-floors.mjs';
import { handlerCounter, readCase, readEvents, report, timeUntilDone } from './worker-shared.mjs';

const { kind, url, schema, eventsFile, warm, total, capSeconds, options, requires = [], apps, way = 'warm' } = readCase();
const SECRET = `bench-${randomBytes(16).toString('hex')}`;
const IN_FLIGHT = 32; // while storing
const concurrency = options.concurrency ?? 8;
// One connection per handler, one for LISTEN, one for receive(): what work() asks of a pool.
const pool = new pg.Pool({ connectionString: url, max: concurrency + 2, connectionTimeoutMillis: 5000 });
pool.on('error', () => {}); // an idle client's error must not end the run; the query that needed it fails
let workerPool; // cold: the worker's own pool, made after storing
const watcher = new pg.Client({ connectionString: url });
await watcher.connect();
const table = `${schema}.deliveries`;
let inbox = createInbox({ database: pool, table });
const stats = createInbox({ database: watcher, table }); // counts from a connection of its own
// The clock stops when no delivery is left unfinished, read from the narrow queue (every row not
// done, kept by the log's triggers in the same transaction), as graphile-worker's row counts its
// jobs table: `stats()` counts every state over the whole log, and at the end of a cold batched run
// its scan of the 10,000 wide rows took 15 to 26 ms of the time measured (a trace, bench/README.md).
const unfinished = async () => (await watcher.query(`SELECT count(*)::int AS n FROM ${table}_queue`)).rows[0].n;
const counter = handlerCounter();
let receiver = createReceiver({ secrets: SECRET, inbox });

/** Signs and receives events [from, to) as a rack would send them, `IN_FLIGHT` at a time. */
async function store(events, from, to) {
  let next = from;
  const lane = async () => {
    while (next < to) {
      const event = events[next++];
      const { bytes, headers } = createSignedRequestSync(event, { secrets: SECRET });
      const result = await receiver.receive({ body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), headers });
      if (result.outcome !== 'accepted') throw new Error(`storing: expected accepted, got ${result.outcome}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

/**
 * Starts a worker with `options`, or says why this build cannot: work() refused an option
 * (RangeError, TypeError), or never read one the case `requires` (a build that predates it ignores it).
 */
function startWorker() {
  const read = new Set();
  const watched = new Proxy(options, { get: (target, key, proxy) => (read.add(key), Reflect.get(target, key, proxy)) });
  let worker;
  try {
    worker = inbox.work(receiver, watched);
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError)
      return { unsupported: `work() refused ${JSON.stringify(options)}: ${error.message}` };
    throw error;
  }
  const ignored = requires.filter((key) => !read.has(key));
  if (ignored.length > 0) return { worker, unsupported: `this build's work() does not read ${ignored.map((k) => `\`${k}\``).join(', ')}` };
  return { worker };
}

/** Cold: the deliveries stored through the storing pool, then a fresh pool, inbox and receiver for the worker, timed from its start. */
async function timeColdWorker(events) {
  await store(events, 0, total);
  await pool.end();
  workerPool = new pg.Pool({ connectionString: url, max: concurrency + 2, connectionTimeoutMillis: 5000 });
  workerPool.on('error', () => {});
  inbox = createInbox({ database: workerPool, table });
  receiver = createReceiver({ secrets: SECRET, inbox });
  receiver.on(events[0].action, () => counter.hit());
  let worker;
  const result = await timeUntilDone({
    start: async () => {
      const started = startWorker();
      if (started.unsupported) throw Object.assign(new Error(started.unsupported), { unsupported: started.unsupported });
      worker = started.worker;
    },
    counter,
    total,
    doneCount: async () => total - (await unfinished()),
    capSeconds,
  }).catch((error) => {
    if (error.unsupported) return { skipped: error.unsupported };
    throw error;
  });
  await worker?.stop();
  if (result.skipped) return result;
  const after = await stats.stats();
  if (after.running !== 0 || after.dead !== 0 || (!result.capped && after.done !== total))
    throw new Error(`the worker left deliveries behind: ${JSON.stringify(after)}`);
  return { ...result, handled: counter.count };
}

async function timeWorker(events) {
  if (way === 'cold') return timeColdWorker(events);
  receiver.on(events[0].action, () => counter.hit());
  await store(events, 0, warm);
  // Warm-up (JIT, prepared statements, the pool's connections), and the check that this build has the mode.
  const warmUp = startWorker();
  if (warmUp.unsupported) {
    await warmUp.worker?.stop();
    return { skipped: warmUp.unsupported };
  }
  await warmUp.worker.drain();
  await warmUp.worker.stop();
  await store(events, warm, warm + total);
  let worker;
  const result = await timeUntilDone({
    start: async () => {
      worker = startWorker().worker;
    },
    counter: { reached: (n) => counter.reached(warm + n), count: 0 }, // the warm-up's calls counted too
    total,
    doneCount: async () => total - (await unfinished()), // the warm-up's rows are done: only these are left
    capSeconds,
  });
  await worker.stop();
  const after = await stats.stats();
  // A capped case (say, one app in per-app order) leaves rows pending: its rate counts what was done.
  if (after.running !== 0 || after.dead !== 0 || (!result.capped && after.done !== warm + total))
    throw new Error(`the worker left deliveries behind: ${JSON.stringify(after)}`);
  return { ...result, handled: counter.count - warm };
}

/** The worker's statements without the SDK (bench/inbox-floors.mjs), on `total` rows stored the same way. */
async function timeFloor(events) {
  checkWorkerStatements(); // throws when src/inbox/work/sql.ts no longer sends what the floor replays
  await store(events, 0, total);
  if (kind === 'batched-floor') {
    const started = performance.now();
    const { perSecond } = await replayBatchedStatements({ pool, table, batch: options.batchSize });
    return { perSecond, done: total, elapsedMs: performance.now() - started, capped: false };
  }
  if (kind === 'pgbench-floor') {
    const perClient = Math.floor(total / concurrency);
    const started = performance.now();
    const { tps } = await pgbenchWorkerFloor({ pool, url, table, clients: concurrency, perClient });
    return { perSecond: tps, done: perClient * concurrency, elapsedMs: performance.now() - started, capped: false };
  }
  const result = await replayWorkerStatements({ pool, table, lanes: concurrency, claimBatch: concurrency, seconds: capSeconds });
  return { perSecond: result.perSecond, claimsPerRow: result.claimsPerRow, capped: false };
}

try {
  await inbox.migrate();
  const events = readEvents(eventsFile).slice(0, warm + total);
  // Per-app cases: the same events spread over `apps` apps, round robin.
  if (apps !== undefined) events.forEach((event, i) => (event.data.app = `app-${String(i % apps).padStart(4, '0')}`));
  report(kind === 'worker' ? await timeWorker(events) : await timeFloor(events));
} catch (error) {
  if (kind !== 'worker' && /no longer matches/.test(error.message)) report({ skipped: error.message, stale: true });
  else throw error;
} finally {
  await watcher.end();
  await (workerPool ?? pool).end();
}
