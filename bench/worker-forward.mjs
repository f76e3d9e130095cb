// Does `rack-webhooks inbox forward` slow the production workers? The inbox worker (concurrency 8,
// no-op handler) drains the same stored deliveries with and without a forward process following
// the same table (`--since 1h`: it reads every row the worker is draining, the worst case, and
// posts each to a local sink that answers 200). The control: a forward as busy, on a copy of the
// table no worker touches, which separates the forward's share of a small machine's CPU from its
// effect on the database. Alternating, ROUNDS rounds of each, a fresh schema per run, dropped
// after. Prints each run, the medians, their ratios and the load average.
// Run after `npx tsup --silent`: `node bench/worker-forward.mjs` (about a minute).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createReceiver } from 'rack-webhooks';
import { createInbox } from 'rack-webhooks/inbox';
import { createSignedRequestSync, createTestEvent } from 'rack-webhooks/testing';

const DATABASE_URL = process.env.RACK_WEBHOOKS_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const ROUNDS = Number(process.env.BENCH_FORWARD_ROUNDS ?? 2);
const TOTAL = Number(process.env.BENCH_FORWARD_TOTAL ?? 2000);
const SECRET = `bench-${randomBytes(8).toString('hex')}`;

// The sink runs in a process of its own: in this one it would take event-loop time from the worker.
const sinkProcess = spawn(
  process.execPath,
  [
    '-e',
    `require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"processed"}')); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const sinkPort = await new Promise((resolve) => sinkProcess.stdout.setEncoding('utf8').once('data', (chunk) => resolve(chunk.trim())));
const sinkUrl = `http://127.0.0.1:${sinkPort}/webhooks`;
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1, connectionTimeoutMillis: 5000 });

function startForward(table) {
  const child = spawn(
    process.execPath,
    [CLI, 'inbox', 'forward', '--database', DATABASE_URL, '--table', table, '--to', sinkUrl, '--since', '1h'],
    {
      env: { ...process.env, RACK_WEBHOOK_SECRETS: 'local-bench-key' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let forwarded = 0;
  child.stdout.setEncoding('utf8').on('data', (chunk) => (forwarded += chunk.split('\n').length - 1));
  const exited = new Promise((resolve) => child.on('close', resolve));
  let stderr = '';
  const ready = new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk).includes('forwarding') && resolve());
    void exited.then(() => reject(new Error(`inbox forward exited: ${stderr}`)));
  });
  return {
    ready,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      return forwarded;
    },
  };
}

/** Stores TOTAL signed deliveries through `receiver`, 50 at a time. */
async function store(receiver) {
  for (let i = 0; i < TOTAL; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, TOTAL - i) }, (_, j) => {
        const event = createTestEvent('app:budget:auto-shutdown:fired', { data: { app: `app-${i + j}` } });
        return receiver.receive(createSignedRequestSync(event, { secrets: SECRET }));
      }),
    );
  }
}

/** `mode`: no forward, a forward on the worker's table, or (the control) one on a copy no worker touches. */
async function run(mode) {
  const schema = `bench_forward_${randomBytes(4).toString('hex')}`; // not rwt_: test runs sweep those
  await admin.query(`CREATE SCHEMA ${schema}`);
  const table = `${schema}.deliveries`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10, connectionTimeoutMillis: 5000 });
  try {
    const inbox = createInbox({ database: pool, table });
    await inbox.migrate();
    const receiver = createReceiver({ secrets: SECRET, inbox });
    let handled = 0;
    let done;
    const allDone = new Promise((resolve) => (done = resolve));
    receiver.on('app:budget:auto-shutdown:fired', () => {
      if (++handled === TOTAL) done();
    });
    await store(receiver);
    if (mode === 'other') {
      const copy = createInbox({ database: pool, table: `${table}_copy` });
      await copy.migrate();
      await store(createReceiver({ secrets: SECRET, inbox: copy }));
    }
    const forward = mode === 'none' ? undefined : startForward(mode === 'same' ? table : `${table}_copy`);
    await forward?.ready;
    const started = performance.now();
    const worker = inbox.work(receiver, { concurrency: 8 });
    await allDone;
    const seconds = (performance.now() - started) / 1000;
    await worker.stop();
    const forwarded = (await forward?.stop()) ?? 0;
    return { perSecond: TOTAL / seconds, forwarded };
  } finally {
    await pool.end();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const LABELS = { none: 'no forward', same: "a forward on the worker's table", other: 'a forward on a copy (control)' };
const results = { none: [], same: [], other: [] };
const loadBefore = loadavg();
for (let round = 1; round <= ROUNDS; round++) {
  for (const mode of ['none', 'same', 'other']) {
    const { perSecond, forwarded } = await run(mode);
    results[mode].push(perSecond);
    console.log(
      `round ${round}, ${LABELS[mode]}: ${perSecond.toFixed(0)} deliveries/s${mode === 'none' ? '' : ` (forwarded ${forwarded} meanwhile)`}`,
    );
  }
}
const [none, same, other] = [median(results.none), median(results.same), median(results.other)];
console.log(`medians: no forward ${none.toFixed(0)}/s, on the worker's table ${same.toFixed(0)}/s, on a copy ${other.toFixed(0)}/s`);
console.log(
  `ratios: on the table / none ${(same / none).toFixed(2)}, on a copy / none ${(other / none).toFixed(2)}, on the table / on a copy ${(same / other).toFixed(2)}`,
);
const load = (values) => values.map((value) => value.toFixed(2)).join(' ');
console.log(`load average before ${load(loadBefore)}, after ${load(loadavg())} (a shared machine: noisy)`);
await admin.end();
sinkProcess.kill();
