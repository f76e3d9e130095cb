// The worker-order group: the inbox worker with order: 'per-app' against the same worker unordered,
// in the same run, on tables holding the same stored deliveries spread over 1, 10 and 1,000 apps.
// Each figure is a ratio to the unordered worker measured in the same round (medians of 3 rounds).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createReceiver } from 'rack-webhooks';
import { createInbox } from 'rack-webhooks/inbox';
import { createSignedRequestSync, createTestEvent } from 'rack-webhooks/testing';

const URL = process.env.RACK_WEBHOOKS_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SECRET = 'bench-' + randomBytes(16).toString('hex');
const ACTION = 'app:budget:auto-shutdown:fired';
const STORED = 3_000;
const SECONDS = 3;
const ROUNDS = 3;
const CONCURRENCY = 16;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function receiverOf(inbox) {
  const receiver = createReceiver({ secrets: SECRET, inbox });
  receiver.on(ACTION, () => {});
  return receiver;
}

/** Done per second by one worker from its start until the table is drained or SECONDS passed. */
async function timeWorker(inbox, options) {
  const started = performance.now();
  const worker = inbox.work(receiverOf(inbox), { concurrency: CONCURRENCY, ...options });
  let timer;
  await Promise.race([worker.drain(), new Promise((resolve) => (timer = setTimeout(resolve, SECONDS * 1000)))]);
  clearTimeout(timer);
  await worker.stop();
  const elapsed = performance.now() - started;
  const stats = await inbox.stats();
  if (stats.running !== 0 || stats.dead !== 0) throw new Error(`the worker left deliveries running or dead: ${JSON.stringify(stats)}`);
  return (stats.done * 1000) / elapsed;
}

export async function benchWorkerOrder() {
  const pool = new pg.Pool({ connectionString: URL, max: CONCURRENCY + 4, connectionTimeoutMillis: 5000 });
  pool.on('error', () => {});
  const schema = `rack_webhooks_bench_${randomBytes(4).toString('hex')}`;
  try {
    await pool.query(`CREATE SCHEMA ${schema}`);
  } catch (error) {
    console.log(`\nPostgreSQL not reachable at ${URL} (${error.message}): worker-order benchmark skipped`);
    await pool.end();
    return { ok: false };
  }
  try {
    // Real stored deliveries once (1 KiB each), copied into each case's table with the app column
    // spread over the case's apps: the claim orders by that column, not by the body.
    const source = `${schema}.source`;
    const sourceInbox = createInbox({ database: pool, table: source });
    await sourceInbox.migrate();
    const receiver = receiverOf(sourceInbox);
    for (let i = 0; i < STORED; i++) {
      const event = createTestEvent(ACTION);
      event.data.note = 'x'.repeat(Math.max(0, 1024 - Buffer.byteLength(JSON.stringify(event)) - 10));
      const { bytes, headers } = createSignedRequestSync(event, { secrets: SECRET });
      const result = await receiver.receive({ body: bytes, headers });
      if (result.outcome !== 'accepted') throw new Error(`expected accepted, got ${result.outcome}`);
    }
    let tables = 0;
    const tableWith = async (apps) => {
      const table = `${schema}.t${tables++}`;
      const inbox = createInbox({ database: pool, table });
      await inbox.migrate();
      const columns = 'body, signature, signed_at, secret_index, action, event_time, event_ns, tick_id, body_key, event_key';
      await pool.query(
        `INSERT INTO ${table} (${columns}, app, state, run_at)
         SELECT ${columns}, 'app-' || (row_number() OVER (ORDER BY id) % $1), 'pending', now() FROM ${source}`,
        [apps],
      );
      return inbox;
    };
    const cases = [
      ['unordered (the reference)', {}, 1_000],
      ["order: 'per-app', 1,000 apps", { order: 'per-app' }, 1_000],
      ["order: 'per-app', 10 apps", { order: 'per-app' }, 10],
      ["order: 'per-app', 1 app", { order: 'per-app' }, 1],
    ];
    const rates = cases.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
      for (const [c, [, options, apps]] of cases.entries()) rates[c].push(await timeWorker(await tableWith(apps), options));
    }
    const reference = median(rates[0]);
    console.log(
      `\n### Inbox worker, per-app order (no-op handler, pg Pool, concurrency ${CONCURRENCY}, ${STORED.toLocaleString('en-US')} stored 1 KiB deliveries, median of ${ROUNDS} rounds)\n`,
    );
    console.log('| case | deliveries/s | ratio to unordered |');
    console.log('|---|---:|---:|');
    for (const [c, [name]] of cases.entries()) {
      const rate = median(rates[c]);
      console.log(`| ${name} | ${Math.round(rate).toLocaleString('en-US')} | ${(rate / reference).toFixed(2)}x |`);
    }
    console.log(`\nrounds, deliveries/s: ${rates.map((r, c) => `case ${c + 1}: ${r.map(Math.round).join(', ')}`).join('; ')}`);
    // No bar: one app is one delivery at a time by definition; the figures are for choosing.
    return { ok: true };
  } finally {
    await pool.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool.end();
  }
}
