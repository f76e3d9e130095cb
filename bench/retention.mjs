// The retention group: a million old done deliveries (each with its attempt row) pruned by
// inbox.watch()'s retention, in batches of 1,000 with a pause between, while receive() accepts 500
// deliveries/s on the same table, open loop (bench/inbox.mjs's latency measurement). The bar: accept
// p99 stays under 20 ms while the pass runs. The same load without pruning is shown for reference.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createInbox } from 'rack-webhooks/inbox';
import { checkBar } from './harness.mjs';
import { closedLoop, deliveries, newReceiver, openLoop, receiving } from './inbox.mjs';

const URL = process.env.RACK_WEBHOOKS_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const OLD_ROWS = Number(process.env.RETENTION_ROWS ?? 1_000_000);
const SEED_CHUNK = 100_000;
const RATE = 500; // deliveries/s
const BASELINE_SECONDS = 10;
const WINDOW_SECONDS = 5; // accept windows run back to back until the pass ends
const MAX_WINDOWS = 360;
const DAY_MS = 86_400_000;
const ms = (n) => n.toFixed(1);

/** Old done rows as the inbox leaves them (a 256-byte body each, to spare the disk), each with its attempt. */
async function seed(pool, table, count) {
  for (let from = 0; from < count; from += SEED_CHUNK) {
    const to = Math.min(count, from + SEED_CHUNK) - 1;
    await pool.query(
      `WITH rows AS (
         INSERT INTO ${table} (received_at, body, signature, signed_at, secret_index, action, event_time, event_ns, app, tick_id,
                               body_key, event_key, state, attempts, done_at)
         SELECT now() - interval '40 days' + i * interval '1 millisecond', convert_to(repeat('x', 256), 'UTF8'), 't=1,v1=00', 1, 0,
                'app:budget:auto-shutdown:noop', '2026-01-01T00:00:00Z', i, 'billing-api', 'tick-' || i,
                'body:old-' || i, 'event:old-' || i, 'done', 1, now() - interval '40 days'
           FROM generate_series($1::int, $2::int) AS i
         RETURNING id, received_at
       )
       INSERT INTO ${table}_attempts (delivery_id, attempt, worker, started_at, finished_at, outcome)
       SELECT id, 1, 'worker-old', received_at, received_at, 'succeeded' FROM rows`,
      [from, to],
    );
  }
  await pool.query(`VACUUM ANALYZE ${table}`);
  await pool.query(`VACUUM ANALYZE ${table}_attempts`);
}

function quantiles(latencies) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q) => sorted[Math.ceil(q * sorted.length) - 1];
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1], count: sorted.length };
}

export async function benchRetention() {
  const pool = new pg.Pool({ connectionString: URL, max: 34, connectionTimeoutMillis: 5000 });
  pool.on('error', () => {});
  const schema = `rack_webhooks_bench_${randomBytes(4).toString('hex')}`;
  try {
    await pool.query(`CREATE SCHEMA ${schema}`);
  } catch (error) {
    console.log(`\nPostgreSQL not reachable at ${URL} (${error.message}): retention benchmark skipped`);
    await pool.end();
    return { ok: false };
  }
  const table = `${schema}.deliveries`;
  try {
    const inbox = createInbox({ database: pool, table });
    await inbox.migrate();
    let started = performance.now();
    await seed(pool, table, OLD_ROWS);
    const seedSeconds = (performance.now() - started) / 1000;

    // Signed just before each window: a pass outlasts the signature's 5-minute tolerance.
    const receiver = newReceiver(inbox);
    const window = async (seconds) => {
      const send = receiving(receiver, deliveries(RATE * seconds));
      let next = 0;
      return (await openLoop(() => send(next++), RATE * seconds, RATE)).latencies;
    };
    const warm = receiving(receiver, deliveries(500));
    await closedLoop((i) => warm(i), 500, 32); // warm the pool's connections on this table
    const baseline = quantiles(await window(BASELINE_SECONDS));

    // The watcher's loop starts its first pass at once: that pass is the one measured.
    const old = async () =>
      Number((await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE received_at < now() - interval '30 days'`)).rows[0].n);
    started = performance.now();
    const watcher = inbox.watch({ retention: { done: 30 * DAY_MS, batchSize: 1000, pauseMs: 50 }, intervalMs: 3_600_000 });
    let finished = false;
    const pass = watcher.prune().finally(() => (finished = true));
    const during = [];
    for (let windows = 0; !finished && windows < MAX_WINDOWS; windows++) during.push(...(await window(WINDOW_SECONDS)));
    await pass;
    const passSeconds = (performance.now() - started) / 1000;
    await watcher.stop();
    const result = { total: OLD_ROWS - (await old()) };
    const load = quantiles(during);

    console.log(
      `\n### Retention: ${OLD_ROWS.toLocaleString('en-US')} old done deliveries (and their attempts) pruned while accepting ${RATE}/s (pg Pool)\n`,
    );
    console.log(
      `seeded in ${seedSeconds.toFixed(0)} s; pass: ${result.total.toLocaleString('en-US')} rows in ${passSeconds.toFixed(0)} s (${Math.round(result.total / passSeconds).toLocaleString('en-US')} rows/s, batches of 1,000, 50 ms apart)\n`,
    );
    console.log('| case | accepts | p50 ms | p99 ms | max ms |');
    console.log('|---|---:|---:|---:|---:|');
    console.log(
      `| receive() at ${RATE}/s, no pruning | ${baseline.count} | ${ms(baseline.p50)} | ${ms(baseline.p99)} | ${ms(baseline.max)} |`,
    );
    console.log(`| receive() at ${RATE}/s while the pass runs | ${load.count} | ${ms(load.p50)} | ${ms(load.p99)} | ${ms(load.max)} |`);
    const ok = result.total === OLD_ROWS && load.count > 0;
    if (!ok) console.log(`MISS: the pass deleted ${result.total} of ${OLD_ROWS} rows, or no accept ran during it`);
    return { ok: checkBar('inbox accept p99 at 500/s while pruning, ms', load.p99, 20) && ok };
  } finally {
    await pool.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool.end();
  }
}
