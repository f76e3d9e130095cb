// npm run bench:outage: what a database blip costs a rack that never retries (issue 18, point 4).
// Three processes, as in production: this one (the database side and the fault), a receiver
// (bench/outage/receiver.mjs: node:http, the node adapter, an inbox on a pg Pool of 10) and a rack
// (bench/outage/load.mjs: 100 deliveries/s on a fixed schedule, each sent 3 times, 30 s timeout).
// In the middle of 5,000 deliveries the database goes away for 5 s, in two scenarios:
// - proxy: the shared server behind a TCP proxy this process controls, which refuses connections
//   and resets the open ones (test/inbox/fixtures/tcp-proxy.mjs); the server itself is untouched;
// - restart: a PostgreSQL cluster of the bench's own (initdb into a temporary directory, its own
//   port), `pg_ctl stop -m fast`, then `pg_ctl start` 5 s later.
// Each with the defaults and with `storeRetry: false` (503 at once, as before issue 18).
// BENCH_OUTAGE_SCENARIOS (proxy,restart,none), BENCH_OUTAGE_CONFIGS (retry,off), BENCH_OUTAGE_DELIVERIES,
// BENCH_OUTAGE_RATE, BENCH_OUTAGE_STOP_MS change the run.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import pg from 'pg';
import { startTcpProxy } from '../test/inbox/fixtures/tcp-proxy.mjs';
import { startOwnCluster } from './outage/cluster.mjs';

const SHARED_URL = process.env.RACK_WEBHOOKS_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DELIVERIES = Number(process.env.BENCH_OUTAGE_DELIVERIES ?? 5000);
const RATE = Number(process.env.BENCH_OUTAGE_RATE ?? 100);
const STOP_MS = Number(process.env.BENCH_OUTAGE_STOP_MS ?? 5000);
const SCENARIOS = (process.env.BENCH_OUTAGE_SCENARIOS ?? 'proxy,restart').split(',');
const CONFIGS = {
  retry: { label: 'storeRetry default (maxWaitMs 20000)', storeRetry: undefined },
  off: { label: 'storeRetry: false (503 at once)', storeRetry: false },
};
const configs = (process.env.BENCH_OUTAGE_CONFIGS ?? 'retry,off').split(',');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const children = new Set();

function child(script, config) {
  const process_ = fork(new URL(script, import.meta.url), [JSON.stringify(config)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(process_);
  process_.on('exit', () => children.delete(process_));
  return process_;
}
const nextMessage = async (process_) => (await once(process_, 'message'))[0];

/** A short-lived client: a restart ends any session open across it. */
async function admin(url, fn) {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** One run: a fresh table, a receiver, a rack, the fault in the middle; then the rows are counted. */
async function run(scenario, configName, database) {
  const { label, storeRetry } = CONFIGS[configName];
  // Not rwt_: the test suites sweep those schemas.
  const schema = `rack_webhooks_bench_${randomBytes(6).toString('hex')}`;
  const table = `${schema}.deliveries`;
  const { createInbox } = await import('../dist/inbox.js');
  // The receiver's createInbox does not migrate; the bench does, once, as a deploy step would.
  await admin(database.adminUrl, async (client) => {
    await client.query(`CREATE SCHEMA ${schema}`);
    await createInbox({ database: client, table }).migrate();
  });
  const secret = randomBytes(32).toString('hex');
  const receiver = child('./outage/receiver.mjs', { databaseUrl: database.receiverUrl, table, secret, storeRetry, poolMax: 10 });
  const { url } = await nextMessage(receiver);

  const rack = child('./outage/load.mjs', { url, secret, deliveries: DELIVERIES, rate: RATE, runId: schema });
  const rackDone = nextMessage(rack);
  const stopAt = (DELIVERIES / RATE / 2) * 1000 - STOP_MS / 2;
  if (scenario !== 'none') {
    await sleep(stopAt);
    await database.stop();
    await sleep(STOP_MS);
    await database.start();
  }
  const load = await rackDone;
  receiver.send('report');
  const seen = await nextMessage(receiver);
  const rows = await admin(database.adminUrl, async (client) => {
    const { rows: counted } = await client.query(
      `SELECT count(*)::int AS rows,
            count(DISTINCT tick_id)::int AS distinct,
            (SELECT count(*)::int FROM (SELECT tick_id FROM ${table} WHERE state <> 'duplicate'
                                        GROUP BY tick_id HAVING count(*) > 1) AS d) AS doubled
       FROM ${table}`,
    );
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
    return counted;
  });
  return {
    scenario,
    configuration: label,
    offered: DELIVERIES,
    requests: load.requests,
    answered200: load.answers[200],
    answered503: load.answers[503],
    answeredOther: load.answers.other,
    clientTimeout: load.answers.timeout,
    rowsStored: rows[0].rows,
    lost: DELIVERIES - rows[0].distinct,
    doubled: rows[0].doubled,
    acceptP50Ms: load.acceptP50Ms,
    acceptP99Ms: load.acceptP99Ms,
    acceptMaxMs: load.acceptMaxMs,
    rackLateDispatchMaxMs: load.lateDispatchMaxMs,
    receiver: {
      loopDelayP99Ms: seen.loopDelayP99Ms,
      loopDelayMaxMs: seen.loopDelayMaxMs,
      poolWaitingMax: seen.poolWaitingMax,
      poolTimeouts: seen.poolTimeouts,
      cpuShare: seen.cpuShare,
    },
    outageRecords: seen.outageRecords,
  };
}

async function proxied() {
  const target = new URL(SHARED_URL);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  return {
    adminUrl: SHARED_URL,
    receiverUrl: proxy.url(SHARED_URL),
    stop: () => proxy.stop(),
    start: () => proxy.resume(),
    close: () => proxy.close(),
  };
}

async function ownCluster() {
  const cluster = await startOwnCluster();
  return {
    adminUrl: cluster.url,
    receiverUrl: cluster.url,
    stop: () => cluster.stop(),
    start: () => cluster.start(),
    close: () => cluster.destroy(),
  };
}

const cleanups = new Set();
const cleanUp = async () => {
  for (const process_ of children) process_.kill('SIGKILL');
  for (const close of cleanups) await close();
};
process.on('SIGINT', () => cleanUp().finally(() => process.exit(130)));

console.log(`${DELIVERIES} deliveries at ${RATE}/s, each sent 3 times over HTTP; the database away for ${STOP_MS} ms in the middle`);
try {
  for (const scenario of SCENARIOS) {
    const database = scenario === 'restart' ? await ownCluster() : await proxied();
    cleanups.add(database.close);
    try {
      for (const configName of configs) console.log(JSON.stringify(await run(scenario, configName, database)));
    } finally {
      cleanups.delete(database.close);
      await database.close();
    }
  }
} finally {
  await cleanUp();
}
