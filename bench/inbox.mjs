// The inbox group: the durable inbox on the local PostgreSQL (and on PGlite), each figure a ratio
// to the database's own limit measured in the same run, so the machine's state moves the floor and
// the candidate alike. Every PostgreSQL table lives in a fresh schema, dropped at the end.
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { createReceiver } from 'rack-webhooks';
import { createInbox } from 'rack-webhooks/inbox';
import { createSignedRequestSync, createTestEvent } from 'rack-webhooks/testing';
import { checkBar } from './harness.mjs';
import {
  checkWorkerStatements,
  findPgbench,
  pgbenchInsertFloor,
  pgbenchWorkerFloor,
  pgliteInsertFloor,
  quotedTables,
  replayWorkerStatements,
  workerStatements,
} from './inbox-floors.mjs';

// The same variable the inbox tests read.
const URL = process.env.RACK_WEBHOOKS_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const SECRET = 'bench-' + randomBytes(16).toString('hex');
const ACTION = 'app:budget:auto-shutdown:fired';
const IN_FLIGHT = 32;
const ROUNDS = 3; // the accept cases alternate with the floor, round after round; medians are kept
const FLOOR_SECONDS = 2;
const ACCEPT_COUNT = 6_000; // per case and round, on a fresh table each: about as many rows as the floor inserts
const WORKER_COUNT = 6_000; // stored per setting: more than the fastest setting finishes in WORKER_SECONDS
const WORKER_SECONDS = 3;
const LATENCY_RATE = 500; // deliveries/s
const LATENCY_SECONDS = 5;
const LATENCY_FLOOR_SECONDS = 3; // information only: the bar is absolute
const PGLITE_COUNT = 1_500; // per round

/** Distinct 1 KiB signed deliveries of one action with a tick_id: each claims two fresh keys. */
export function deliveries(count) {
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    const event = createTestEvent(ACTION);
    event.data.note = '';
    event.data.note = 'x'.repeat(1024 - Buffer.byteLength(JSON.stringify(event)));
    const { bytes, headers } = createSignedRequestSync(event, { secrets: SECRET });
    // A Buffer, as the node, Express and Fastify adapters hand the body over.
    out[i] = { body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), headers };
  }
  return out;
}

// The statement the inbox sends per delivery (src/inbox/store/store-delivery.ts), for the Node floors.
const insertSql = (table) => `INSERT INTO ${table}
  (body, signature, signed_at, secret_index, action, event_time, event_ns, app, tick_id, body_key, event_key, state, run_at)
VALUES ($1, $2, $3::bigint, $4, $5, $6, $7::bigint, $8, $9, $10, $11, $12, CASE WHEN $12 = 'pending' THEN now() END)
ON CONFLICT DO NOTHING
RETURNING id::text AS id`;

/** Parameters of that insert, built before any clock starts: what the SDK sends, minus its own work. */
function insertParams(count) {
  return Array.from({ length: count }, () => {
    const tick = `tick-${randomBytes(16).toString('hex')}`;
    return [
      randomBytes(1024),
      `t=1795000000,v1=${randomBytes(32).toString('hex')}`,
      '1795000000',
      0,
      ACTION,
      '2026-11-18T11:06:40.123456789Z',
      '1795000000123456789',
      'billing-api',
      tick,
      `replay:1795000000:${randomBytes(32).toString('base64url')}`,
      `event:${ACTION}:${tick}`,
      'pending',
    ];
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const perSecond = (n) => Math.round(n).toLocaleString('en-US');
const ms = (n) => n.toFixed(1);

export function newReceiver(inbox) {
  const receiver = createReceiver({ secrets: SECRET, inbox });
  receiver.on(ACTION, () => {}); // no-op: the worker rows time the inbox, not a handler
  return receiver;
}

/** `send(i)` for every delivery i: resolves when it is stored, throws when it was not accepted. */
export const receiving = (receiver, items) => async (i) => {
  const result = await receiver.receive(items[i]);
  if (result.outcome !== 'accepted') throw new Error(`expected accepted, got ${result.outcome}`);
};

/** Closed loop: `inFlight` lanes, each awaiting one send after another. Resolves with sends/s. */
export async function closedLoop(send, count, inFlight) {
  let next = 0;
  const lane = async () => {
    while (next < count) await send(next++);
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, lane));
  return (count * 1000) / (performance.now() - started);
}

/**
 * Open loop: send i starts at `i / rate` seconds whether or not earlier ones finished, and its
 * latency counts from that scheduled start, so a stall shows up in every send it delays (a closed
 * loop would send fewer and hide it).
 */
export async function openLoop(send, count, rate) {
  const latencies = new Array(count);
  const pending = [];
  const started = performance.now();
  let i = 0;
  while (i < count) {
    const now = performance.now();
    while (i < count && started + (i * 1000) / rate <= now) {
      const scheduled = started + (i * 1000) / rate;
      const n = i++;
      pending.push(send(n).then(() => (latencies[n] = performance.now() - scheduled)));
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(pending);
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.ceil(q * count) - 1];
  return { p50: at(0.5), p99: at(0.99), max: latencies[count - 1], latencies };
}

/** Fills `table` with `count` pending rows copied from accepted deliveries (real bodies), in one statement. */
async function prestore(pool, from, table, count) {
  const columns = 'body, signature, signed_at, secret_index, action, event_time, event_ns, app, tick_id, body_key, event_key';
  await pool.query(
    `INSERT INTO ${table} (${columns}, state, run_at) SELECT ${columns}, 'pending', now() FROM ${from} ORDER BY id LIMIT $1`,
    [count],
  );
}

/**
 * One worker from its start until it has drained the table or `seconds` have passed, whichever
 * comes first; then stop() (in-flight handlers finish) and count the rows marked done. Also counts
 * the claims it sent (on `pool.query`, one function call each), so the statements floor can send
 * as many per delivery: a claim is a commit, shared by the rows it takes.
 */
async function timeWorker(pool, inbox, receiver, options, seconds) {
  const { deliveries, attempts, queue } = quotedTables(inbox.table);
  const claim = workerStatements(deliveries, attempts, queue).claim;
  const claimStart = claim.slice(0, claim.indexOf('LIMIT ')); // the claim's cap, written in after, is the worker's batchSize
  let claims = 0;
  const query = pool.query;
  pool.query = function (config, values) {
    if (config?.text?.startsWith(claimStart)) claims++;
    return query.call(this, config, values);
  };
  let stats, elapsed;
  try {
    const started = performance.now();
    const worker = inbox.work(receiver, options);
    let timer;
    await Promise.race([worker.drain(), new Promise((resolve) => (timer = setTimeout(resolve, seconds * 1000)))]);
    clearTimeout(timer);
    await worker.stop();
    elapsed = performance.now() - started;
    stats = await inbox.stats();
  } finally {
    pool.query = query;
  }
  if (stats.running !== 0 || stats.dead !== 0) throw new Error(`the worker left deliveries running or dead: ${JSON.stringify(stats)}`);
  if (claims === 0) throw new Error('no claim counted: the worker no longer sends the claim bench/inbox-floors.mjs copies');
  return { perSecond: (stats.done * 1000) / elapsed, claimsPerRow: claims / Math.max(1, stats.done) };
}

function table(title, floorName, floor, rows) {
  console.log(`\n### ${title}\n`);
  console.log('| case | deliveries/s | ratio to floor |');
  console.log('|---|---:|---:|');
  console.log(`| floor: ${floorName} | ${perSecond(floor)} | 1.00x |`);
  for (const [name, rate] of rows) console.log(`| ${name} | ${perSecond(rate)} | ${(rate / floor).toFixed(2)}x |`);
}

async function benchPostgres(pool, schema) {
  let tables = 0;
  const freshTable = async () => {
    const name = `${schema}.t${tables++}`;
    await createInbox({ database: pool, table: name }).migrate();
    return name;
  };

  // Warm-up: opens the pool's connections and lets the JIT settle, outside any timing.
  const warm = deliveries(2_000);
  await closedLoop(receiving(newReceiver(createInbox({ database: pool, table: await freshTable() })), warm), warm.length, IN_FLIGHT);

  // 1. Accept throughput. Each round: pgbench (prepared, then extended), the SDK, then the same
  // INSERT sent from Node through pg (no verify, no parse: what any receiver on pg pays), each on
  // a fresh, empty table.
  const cases = [
    [
      "information: pgbench as above, extended protocol (parses and plans every insert, as pg's `pool.query(text, values)` does)",
      async (table) => {
        return (await pgbenchInsertFloor({ url: URL, table, clients: IN_FLIGHT, seconds: FLOOR_SECONDS, eventKey: true, mode: 'extended' }))
          .tps;
      },
    ],
    [
      'receive() with an inbox: verify + parse + insert + commit',
      async (table) => {
        const items = deliveries(ACCEPT_COUNT);
        return closedLoop(receiving(newReceiver(createInbox({ database: pool, table })), items), items.length, IN_FLIGHT);
      },
    ],
    [
      'information: the same INSERT alone through pg `pool.query(text, values)`, as the inbox sends it',
      async (table) => {
        const params = insertParams(ACCEPT_COUNT);
        const text = insertSql(table);
        return closedLoop((i) => pool.query(text, params[i]), params.length, IN_FLIGHT);
      },
    ],
    [
      'information: the same INSERT through pg as a named (prepared once per connection) statement',
      async (table) => {
        const params = insertParams(ACCEPT_COUNT);
        const text = insertSql(table);
        const name = `insert-${table}`;
        return closedLoop((i) => pool.query({ name, text, values: params[i] }), params.length, IN_FLIGHT);
      },
    ],
  ];
  const SDK = 1; // the case with the bar
  const floors = [];
  const rates = cases.map(() => []);
  let acceptedTable;
  for (let r = 0; r < ROUNDS; r++) {
    floors.push(
      (await pgbenchInsertFloor({ url: URL, table: await freshTable(), clients: IN_FLIGHT, seconds: FLOOR_SECONDS, eventKey: true })).tps,
    );
    for (const [c, [, run]] of cases.entries()) {
      const table = await freshTable();
      if (c === SDK) acceptedTable = table; // real bodies for the worker rows
      rates[c].push(await run(table));
    }
  }
  const floor = median(floors);
  const accept = median(rates[SDK]);
  table(
    `Inbox accept throughput (pg Pool, ${IN_FLIGHT} in flight, 1 KiB deliveries, median of ${ROUNDS} rounds)`,
    `pgbench, ${IN_FLIGHT} clients, the same INSERT ... ON CONFLICT DO NOTHING (prepared)`,
    floor,
    cases.map(([name], c) => [name, median(rates[c])]),
  );
  console.log(
    `\nrounds, deliveries/s: floor ${floors.map(perSecond).join(', ')}; ${rates.map((r, c) => `case ${c + 1}: ${r.map(perSecond).join(', ')}`).join('; ')}`,
  );

  // 2. Worker throughput with a no-op handler: claim (and record the attempt), then in one
  // transaction per delivery: mark done (which locks the row), run the handlers, commit. Then the floors of what the
  // worker must send: its own statements with no SDK around them, on tables of the same size.
  const settings = [
    // The default concurrency follows the pool's max (src/inbox/work/worker.ts): 16 on this pool of 34.
    [`defaults (on this pool of ${IN_FLIGHT + 2}: concurrency 16, batchSize 16)`, {}],
    ['concurrency 16, batchSize 16', { concurrency: 16, batchSize: 16 }],
    [`concurrency ${IN_FLIGHT}, batchSize ${IN_FLIGHT}`, { concurrency: IN_FLIGHT, batchSize: IN_FLIGHT }],
  ];
  const storedTable = async () => {
    const name = await freshTable();
    await prestore(pool, acceptedTable, name, WORKER_COUNT);
    return name;
  };
  const workers = [];
  for (const [name, options] of settings) {
    const inbox = createInbox({ database: pool, table: await storedTable() });
    workers.push([`one worker, ${name}`, await timeWorker(pool, inbox, newReceiver(inbox), options, WORKER_SECONDS)]);
  }
  const best = workers.reduce((a, b) => (b[1].perSecond > a[1].perSecond ? b : a));
  const widest = workers[workers.length - 1][1]; // the floors run at this setting's concurrency
  // (a) As many claims per delivery as the worker at IN_FLIGHT sent in this run (rounded to whole rows per claim).
  const claimBatch = Math.max(1, Math.round(1 / widest.claimsPerRow));
  const statementsFloor = await replayWorkerStatements({
    pool,
    table: await storedTable(),
    lanes: IN_FLIGHT,
    claimBatch,
    seconds: WORKER_SECONDS,
  });
  const statementsOneByOne = await replayWorkerStatements({
    pool,
    table: await storedTable(),
    lanes: IN_FLIGHT,
    claimBatch: 1,
    seconds: WORKER_SECONDS,
  });
  // (b) pgbench: every client claims one row at a time (no loops in a pgbench script), and all of them must find one.
  const pgbenchWorker = await pgbenchWorkerFloor({
    pool,
    url: URL,
    table: await storedTable(),
    clients: IN_FLIGHT,
    perClient: Math.floor(WORKER_COUNT / IN_FLIGHT),
  });

  console.log(
    `\n### Inbox worker throughput (no-op handler, pg Pool: ${WORKER_COUNT.toLocaleString('en-US')} stored deliveries, done per second over at most ${WORKER_SECONDS} s)\n`,
  );
  console.log('| case | deliveries/s | claims per delivery | ratio to the pgbench insert floor | ratio to floor (a) |');
  console.log('|---|---:|---:|---:|---:|');
  const row = (name, rate, claimsPerRow) =>
    console.log(
      `| ${name} | ${perSecond(rate)} | ${claimsPerRow === undefined ? '' : claimsPerRow.toFixed(2)} | ${(rate / floor).toFixed(2)}x | ${(rate / statementsFloor.perSecond).toFixed(2)}x |`,
    );
  row('floor: the same pgbench insert floor as above (the bar)', floor);
  row(
    `floor (a): the worker's required statements, replayed through pg: ${IN_FLIGHT} lanes, each a claim of ${claimBatch} rows, then per row BEGIN, done (which locks), COMMIT, all named`,
    statementsFloor.perSecond,
    statementsFloor.claimsPerRow,
  );
  row('information: floor (a) claiming 1 row at a time', statementsOneByOne.perSecond, statementsOneByOne.claimsPerRow);
  row(`floor (b): pgbench, ${IN_FLIGHT} clients, -M prepared, the same statements, claiming 1 row at a time`, pgbenchWorker.tps, 1);
  for (const [name, result] of workers) row(name, result.perSecond, result.claimsPerRow);
  const bestName = best[0].replace('one worker, ', '');
  console.log(
    `\nworker (best: ${bestName}) / required-statements floor (a): ${(best[1].perSecond / statementsFloor.perSecond).toFixed(2)}x`,
  );
  console.log(
    `worker (best: ${bestName}) / pgbench worker-statements floor (b), which claims 1 row at a time: ${(best[1].perSecond / pgbenchWorker.tps).toFixed(2)}x`,
  );
  console.log(
    `required-statements floor (a) / pgbench insert floor: ${(statementsFloor.perSecond / floor).toFixed(2)}x, what these statements on this schema leave for the bar's ratio`,
  );

  // 3. Accept latency at a steady rate, open loop. Fresh tables, warmed up first: every pooled
  // connection loads a new table's catalog entries on its first insert.
  const latencyCount = LATENCY_RATE * LATENCY_SECONDS;
  const latencyItems = deliveries(latencyCount + 500);
  const send = receiving(newReceiver(createInbox({ database: pool, table: await freshTable() })), latencyItems);
  await closedLoop((i) => send(latencyCount + i), 500, IN_FLIGHT);
  const latency = await openLoop(send, latencyCount, LATENCY_RATE);
  const floorText = insertSql(await freshTable());
  const params = insertParams(LATENCY_RATE * LATENCY_FLOOR_SECONDS + 500);
  const insert = (i) => pool.query(floorText, params[i]);
  await closedLoop((i) => insert(params.length - 1 - i), 500, IN_FLIGHT);
  const latencyFloor = await openLoop(insert, LATENCY_RATE * LATENCY_FLOOR_SECONDS, LATENCY_RATE);
  console.log(`\n### Inbox accept latency (pg Pool, open loop at ${LATENCY_RATE} deliveries/s, from each delivery's scheduled start)\n`);
  console.log('| case | p50 ms | p99 ms | max ms |');
  console.log('|---|---:|---:|---:|');
  console.log(
    `| information: the same INSERT alone through pg, ${LATENCY_FLOOR_SECONDS} s | ${ms(latencyFloor.p50)} | ${ms(latencyFloor.p99)} | ${ms(latencyFloor.max)} |`,
  );
  console.log(`| receive() with an inbox, ${LATENCY_SECONDS} s | ${ms(latency.p50)} | ${ms(latency.p99)} | ${ms(latency.max)} |`);

  let ok = checkBar('inbox accept / pgbench insert', accept / floor, 0.5, '>=');
  ok = checkBar(`inbox worker / pgbench insert (best: ${bestName})`, best[1].perSecond / floor, 0.25, '>=') && ok;
  ok = checkBar('inbox accept p99 at 500/s, ms', latency.p99, 20) && ok;
  return ok;
}

async function benchPGlite() {
  // Each on its own fresh in-memory database: one PGlite runs one query at a time.
  const floorDb = new PGlite();
  const inboxDb = new PGlite();
  try {
    await Promise.all([floorDb.waitReady, inboxDb.waitReady]); // seconds of WebAssembly start-up, untimed
    await createInbox({ database: floorDb, table: 'floor' }).migrate();
    const inbox = createInbox({ database: inboxDb });
    await inbox.migrate();
    const items = deliveries(PGLITE_COUNT * ROUNDS + 200);
    const send = receiving(newReceiver(inbox), items);
    await closedLoop((i) => send(PGLITE_COUNT * ROUNDS + i), 200, 1); // warm-up, as the floor's
    // Alternating rounds, medians: one round of either is about a second, and moves by a third.
    const floors = [];
    const accepts = [];
    for (let r = 0; r < ROUNDS; r++) {
      floors.push((await pgliteInsertFloor({ database: floorDb, table: 'floor', count: PGLITE_COUNT, eventKey: true })).perSecond);
      accepts.push(await closedLoop((i) => send(r * PGLITE_COUNT + i), PGLITE_COUNT, 1));
    }
    const floor = median(floors);
    const accept = median(accepts);
    table(
      `Inbox accept throughput on PGlite (in memory, one delivery at a time, median of ${ROUNDS} rounds)`,
      'the same insert, alone, on another fresh PGlite',
      floor,
      [['receive() with an inbox on PGlite', accept]],
    );
    console.log(`\nrounds, deliveries/s: floor ${floors.map(perSecond).join(', ')}; receive() ${accepts.map(perSecond).join(', ')}`);
    return checkBar('inbox accept on PGlite / PGlite insert', accept / floor, 0.5, '>=');
  } finally {
    await Promise.all([floorDb.close(), inboxDb.close()]);
  }
}

export async function benchInbox() {
  checkWorkerStatements(); // a stale copy of the worker's statements fails the run, not just this group
  try {
    findPgbench();
  } catch (error) {
    console.log(`\n${error.message}: inbox benchmark skipped`);
    return { ok: false };
  }
  const pool = new pg.Pool({ connectionString: URL, max: IN_FLIGHT + 2, connectionTimeoutMillis: 5000 }); // + the worker's claim and LISTEN
  pool.on('error', () => {}); // an idle client's error must not end the run; the query that needed it fails
  const schema = `rack_webhooks_bench_${randomBytes(4).toString('hex')}`;
  try {
    await pool.query(`CREATE SCHEMA ${schema}`);
  } catch (error) {
    console.log(`\nPostgreSQL not reachable at ${URL} (${error.message}): inbox benchmark skipped`);
    await pool.end();
    return { ok: false };
  }
  let ok;
  try {
    ok = await benchPostgres(pool, schema);
  } finally {
    await pool.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool.end();
  }
  ok = (await benchPGlite()) && ok;
  return { ok };
}
