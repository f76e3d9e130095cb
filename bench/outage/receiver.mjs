// The receiver of `npm run bench:outage`, in its own process as in production: node:http, the SDK's
// node adapter, an inbox on a pg Pool. Told its database and options by the parent (argv[2], JSON);
// answers { url } once listening, and on 'report' what it saw: the outage log records, its event
// loop delay, the pool's longest queue of waiting checkouts and its CPU time.
import { createServer } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { createReceiver } from '../../dist/index.js';
import { createInbox } from '../../dist/inbox.js';
import { createNodeHandler } from '../../dist/node.js';

// Gone with the bench: never left running.
process.on('disconnect', () => process.exit(0));
const { databaseUrl, table, secret, storeRetry, poolMax } = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ connectionString: databaseUrl, max: poolMax, connectionTimeoutMillis: 2000 });
pool.on('error', () => {});
// Checkouts that waited connectionTimeoutMillis for a busy pool (pg-pool's own message): saturation, not an outage.
let poolTimeouts = 0;
const connect = pool.connect.bind(pool);
pool.connect = (callback) =>
  connect((error, client, done) => {
    if (error?.message === 'timeout exceeded when trying to connect') poolTimeouts++;
    callback(error, client, done);
  });
const inbox = createInbox({ database: pool, table, storeRetry });
const outage = [];
const receiver = createReceiver({
  secrets: secret,
  inbox,
  logger: (record) => {
    if (record.event.startsWith('inbox_outage')) outage.push(record);
  },
});
const server = createServer({ keepAliveTimeout: 60_000, requestTimeout: 0 }, createNodeHandler(receiver));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
let poolWaitingMax = 0;
let poolTotalMax = 0;
const sampler = setInterval(() => {
  poolWaitingMax = Math.max(poolWaitingMax, pool.waitingCount);
  poolTotalMax = Math.max(poolTotalMax, pool.totalCount);
}, 20);
const cpuStart = process.cpuUsage();
const started = performance.now();

process.send({ url: `http://127.0.0.1:${server.address().port}/webhooks` });
process.on('message', async (message) => {
  if (message !== 'report') return;
  clearInterval(sampler);
  loop.disable();
  const cpu = process.cpuUsage(cpuStart);
  process.send({
    outageRecords: outage.map(({ event, code, waited, refused, durationMs }) => ({ event, code, waited, refused, durationMs })),
    loopDelayP99Ms: Math.round(loop.percentile(99) / 1e6),
    loopDelayMaxMs: Math.round(loop.max / 1e6),
    poolWaitingMax,
    poolTimeouts,
    cpuShare: Number(((cpu.user + cpu.system) / 1000 / (performance.now() - started)).toFixed(2)),
  });
  server.closeAllConnections();
  server.close();
  await pool.end();
  process.disconnect();
});
