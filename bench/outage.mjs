// npm run bench:outage: what a database blip costs a rack that never retries (issue 18, point 4).
// A receiver (node:http, the SDK's node adapter, an inbox on a pg Pool) whose PostgreSQL is reached
// through a TCP proxy this script controls (test/inbox/fixtures/tcp-proxy.mjs): the shared server
// is never touched. Like a rack: 100 deliveries a second, each sent 3 times (0, 20 and 60 ms apart),
// 5,000 deliveries over real HTTP, each request given up after 30 s (the rack's dispatch timeout);
// in the middle the database "stops" for 5 s (nothing listens, every open connection is reset).
// Prints, per configuration: deliveries offered, answers 200 / 503 / other / timed out, rows
// stored, lost (offered minus stored), doubled, and the p50 / p99 / max time to a 200.
// BENCH_OUTAGE_DELIVERIES, BENCH_OUTAGE_RATE, BENCH_OUTAGE_STOP_MS change the load; BENCH_OUTAGE_BASELINE=1
// also runs with storeRetry: false (503 at once, as before issue 18) for comparison.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import pg from 'pg';
import { createReceiver } from '../dist/index.js';
import { createInbox } from '../dist/inbox.js';
import { createNodeHandler } from '../dist/node.js';
import { createSignedRequestSync, createTestEvent } from '../dist/testing.js';
import { startTcpProxy } from '../test/inbox/fixtures/tcp-proxy.mjs';

const DATABASE_URL = process.env.RACK_WEBHOOKS_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DELIVERIES = Number(process.env.BENCH_OUTAGE_DELIVERIES ?? 5000);
const RATE = Number(process.env.BENCH_OUTAGE_RATE ?? 100);
const STOP_MS = Number(process.env.BENCH_OUTAGE_STOP_MS ?? 5000);
const RACK_TIMEOUT_MS = 30_000;
const COPY_DELAYS_MS = [0, 20, 60];
const ACTION = 'app:budget:auto-shutdown:fired';
const secret = randomBytes(32).toString('hex');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(label, storeRetry) {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  // Not rwt_: the test suites sweep those schemas.
  const schema = `rack_webhooks_bench_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const table = `${schema}.deliveries`;
  const target = new URL(DATABASE_URL);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const pool = new pg.Pool({ connectionString: proxy.url(DATABASE_URL), max: 10, connectionTimeoutMillis: 2000 });
  pool.on('error', () => {});
  const inbox = createInbox({ database: pool, table, storeRetry });
  await inbox.migrate();
  const outage = [];
  const receiver = createReceiver({
    secrets: secret,
    inbox,
    logger: (record) => {
      if (record.event.startsWith('inbox_outage')) outage.push(record);
    },
  });
  const server = createServer(createNodeHandler(receiver));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/webhooks`;

  const answers = { 200: 0, 503: 0, other: 0, timeout: 0 };
  const latencies = [];
  const send = async (request) => {
    const started = performance.now();
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.timeout(RACK_TIMEOUT_MS),
      });
      await response.arrayBuffer();
      if (response.status === 200) latencies.push(performance.now() - started);
      answers[response.status === 200 || response.status === 503 ? response.status : 'other']++;
    } catch {
      answers.timeout++;
    }
  };

  const stopAt = (DELIVERIES / RATE / 2) * 1000 - STOP_MS / 2;
  const fault = (async () => {
    await sleep(stopAt);
    proxy.stop();
    await sleep(STOP_MS);
    await proxy.resume();
  })();
  const inFlight = [];
  const start = Date.now();
  for (let i = 0; i < DELIVERIES; i++) {
    const wait = start + (i * 1000) / RATE - Date.now();
    if (wait > 0) await sleep(wait);
    const event = createTestEvent(ACTION, { data: { tick_id: `bench-${i}` } });
    const request = createSignedRequestSync(event, { secrets: secret });
    for (const delay of COPY_DELAYS_MS) inFlight.push(sleep(delay).then(() => send(request)));
  }
  await fault;
  await Promise.all(inFlight);

  const { rows } = await admin.query(`SELECT count(*)::int AS n, count(DISTINCT tick_id)::int AS distinct FROM ${table}`);
  latencies.sort((a, b) => a - b);
  const at = (q) => (latencies.length === 0 ? NaN : latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]);
  const result = {
    configuration: label,
    offered: DELIVERIES,
    requests: DELIVERIES * COPY_DELAYS_MS.length,
    answered200: answers[200],
    answered503: answers[503],
    answeredOther: answers.other,
    timedOut: answers.timeout,
    rowsStored: rows[0].n,
    lost: DELIVERIES - rows[0].distinct,
    doubled: rows[0].n - rows[0].distinct,
    acceptP50Ms: Math.round(at(0.5)),
    acceptP99Ms: Math.round(at(0.99)),
    acceptMaxMs: Math.round(latencies.at(-1) ?? NaN),
    outageRecords: outage.map(({ event, code, waited, refused, durationMs }) => ({ event, code, waited, refused, durationMs })),
  };
  await new Promise((resolve) => server.close(resolve));
  await pool.end();
  await proxy.close();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
  return result;
}

console.log(
  `${DELIVERIES} deliveries at ${RATE}/s, each sent ${COPY_DELAYS_MS.length} times over HTTP; PostgreSQL stopped for ${STOP_MS} ms in the middle`,
);
const results = [await run('storeRetry default (maxWaitMs 20000, maxBufferedBytes 64 MiB)', undefined)];
if (process.env.BENCH_OUTAGE_BASELINE === '1') results.push(await run('storeRetry: false (503 at once, before issue 18)', false));
for (const result of results) console.log(JSON.stringify(result, null, 2));
