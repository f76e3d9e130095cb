// The worker group: the inbox worker against graphile-worker and pg-boss on the same PostgreSQL,
// the same Node (22: the peers need it), the same concurrency, the same stored 1 KiB payloads and a
// no-op handler, measured in one run, alternating, medians of the rounds. Every case runs in a
// process of its own on a schema of its own, dropped after. Two ways (BENCH_WORKER_WAY, default
// both): warm (a warm-up first, then the clock until empty) and cold (no warm-up, a fresh pool,
// graphile-worker through runOnce); a bar holds only when both ways say so. The peers live in
// bench/peers/ with their own package.json and lock file, installed here on first use; the
// project's own install never holds them. A new worker mode is one more row of CASES.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createTestEvent } from 'rack-webhooks/testing';
import { checkBar } from './harness.mjs';

const DATABASE_URL = process.env.RACK_WEBHOOKS_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PEERS = fileURLToPath(new URL('./peers/', import.meta.url));
const ROUNDS = Number(process.env.BENCH_WORKER_ROUNDS ?? 3);
const TOTAL = Number(process.env.BENCH_WORKER_TOTAL ?? 10_000); // stored deliveries (jobs) per case and round
const WARM = 500; // run through the same worker first, in the same process: JIT, connections, prepared statements
const CAP_SECONDS = Number(process.env.BENCH_WORKER_CAP_SECONDS ?? 20); // a case still running then reports what it did
const CONCURRENCY = 8;
const WAYS = { warm: ['warm'], cold: ['cold'], both: ['warm', 'cold'] }[process.env.BENCH_WORKER_WAY ?? 'both'];
if (!WAYS) throw new Error(`BENCH_WORKER_WAY must be warm, cold or both, got ${process.env.BENCH_WORKER_WAY}`);
// What one run measures: ways at sizes. BENCH_WORKER_SETTINGS=warm@10000,cold@10000,cold@50000 runs
// these three in the same rounds (every ratio of the run then comes from the same rounds); unset,
// it is BENCH_WORKER_WAY at BENCH_WORKER_TOTAL.
const SETTINGS = (process.env.BENCH_WORKER_SETTINGS?.split(',').filter(Boolean) ?? WAYS.map((way) => `${way}@${TOTAL}`)).map((key) => {
  const [way, total] = key.split('@');
  if (!['warm', 'cold'].includes(way) || !(Number(total) > 0))
    throw new Error(`BENCH_WORKER_SETTINGS takes way@total items (warm@10000,cold@50000), got ${key}`);
  return { key, way, total: Number(total) };
});
const LARGEST = Math.max(...SETTINGS.map((setting) => setting.total));
const ACTION = 'app:budget:auto-shutdown:fired';

/**
 * The cases. `run`: which process runs it (bench/worker-inbox.mjs, bench/peers/<run>.mjs).
 * `options`: handed to `inbox.work()`, graphile-worker's `run()` or pg-boss's `work()` as they are.
 * `requires`: options a build of rack-webhooks must read for the row to count; a build that
 * refuses them (RangeError, TypeError) or ignores them prints the row as skipped.
 * `apps`: spread the deliveries over this many apps. `ratioTo`, `ratioLabel`: a case this row is read against.
 * `ways`: the ways it runs (default both); the per-app and floor rows only warm.
 */
const CASES = [
  {
    id: 'ours',
    run: 'inbox',
    name: 'rack-webhooks `work(receiver, { concurrency: 8 })`: the attempt counted at claim, then per delivery one transaction (done-mark, handlers; the attempt written), its COMMIT sent with the BEGIN of the next delivery',
    options: { concurrency: CONCURRENCY },
  },
  {
    id: 'ours-batched',
    run: 'inbox',
    name: "rack-webhooks `work(receiver, { concurrency: 8, mode: 'batched' })`: one claim of up to 400 rows (the default batchSize) counts their attempts (commit) ahead of the handlers, one statement records many outcomes and writes their attempts; no `context.transaction`",
    options: { concurrency: CONCURRENCY, mode: 'batched' },
    requires: ['mode'],
  },
  ...[1, 10, 1000].map((apps) => ({
    id: `ours-per-app-${apps}`,
    run: 'inbox',
    name: `rack-webhooks \`order: 'per-app'\`, the deliveries spread over ${apps.toLocaleString('en-US')} app${apps === 1 ? '' : 's'}`,
    options: { concurrency: CONCURRENCY, order: 'per-app' },
    requires: ['order'],
    apps,
    ratioTo: 'ours',
    ways: ['warm'],
    ratioLabel: `per-app order, ${apps.toLocaleString('en-US')} app${apps === 1 ? '' : 's'} / the unordered worker`,
  })),
  // BENCH_WORKER_BASELINE=<dir>: the same two rows from another build (a directory with its package.json,
  // dist/ and bench/, say a copy of main's), for an A/B in one run.
  ...(process.env.BENCH_WORKER_BASELINE
    ? [
        {
          id: 'baseline',
          run: 'inbox',
          root: process.env.BENCH_WORKER_BASELINE,
          name: 'the same, baseline build',
          options: { concurrency: CONCURRENCY },
        },
        {
          id: 'baseline-batched',
          run: 'inbox',
          root: process.env.BENCH_WORKER_BASELINE,
          name: "the same `mode: 'batched'`, baseline build",
          options: { concurrency: CONCURRENCY, mode: 'batched' },
        },
      ]
    : []),
  {
    id: 'graphile-default',
    run: 'graphile-worker',
    name: 'graphile-worker 0.18, default settings, `concurrency: 8` (one claim statement, one DELETE per job)',
    options: { concurrency: CONCURRENCY },
  },
  {
    id: 'graphile-batched',
    run: 'graphile-worker',
    name: 'graphile-worker 0.18, `localQueue: { size: 500 }, completeJobBatchDelay: 0` (in `preset.worker`), `concurrency: 8`',
    options: { concurrency: CONCURRENCY, preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0 } } },
  },
  {
    id: 'pg-boss',
    run: 'pg-boss',
    name: 'pg-boss 12, one `work()`, `batchSize: 8, burstWhenBatchFull: true` (a fetch and a completion per batch of 8)',
    options: { batchSize: CONCURRENCY, burstWhenBatchFull: true },
  },
  {
    id: 'pg-boss-transactional',
    run: 'pg-boss',
    name: 'pg-boss 12, as above with `transactional: true` (handler and completion in one transaction per batch)',
    options: { batchSize: CONCURRENCY, burstWhenBatchFull: true, transactional: true },
  },
  {
    id: 'floor-pgbench',
    run: 'inbox',
    kind: 'pgbench-floor',
    ways: ['warm'],
    name: "floor: the statements the default mode's guarantees need, from pgbench (bench/inbox-floors.mjs), 8 clients: a claim of 1 row that counts the attempt (commit), then BEGIN, done-mark (which writes the attempt), COMMIT",
    options: { concurrency: CONCURRENCY },
  },
  {
    id: 'floor-batched',
    run: 'inbox',
    kind: 'batched-floor',
    name: "floor: `mode: 'batched'`'s statements replayed through pg with no SDK code (bench/inbox-floors.mjs): claims of 400 rows that count their attempts, one complete per claim that writes them, overlapping the next claim",
    options: { batchSize: 400 },
  },
];

/** `npm ci` in bench/peers/ when its node_modules is missing or holds other versions than package.json pins. Throws when it cannot. */
function ensurePeers() {
  const pinned = JSON.parse(readFileSync(join(PEERS, 'package.json'), 'utf8')).dependencies;
  const installedVersion = (name) => {
    const file = join(PEERS, 'node_modules', name, 'package.json');
    return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : undefined;
  };
  const stale = () => Object.entries(pinned).filter(([name, version]) => installedVersion(name) !== version);
  if (stale().length === 0) return;
  console.log(`\nInstalling the worker group's peers into bench/peers/ (npm ci): ${Object.keys(pinned).join(', ')}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--prefix', PEERS, '--no-audit', '--no-fund', '--loglevel=error', '--engine-strict=false'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const missing = stale();
  if (result.status !== 0 || missing.length > 0) {
    throw new Error(
      `the worker group cannot run without its peers: \`npm ci --prefix bench/peers\` exited with ${result.status ?? result.signal ?? result.error?.message}` +
        (missing.length ? `, and ${missing.map(([name, version]) => `${name}@${version}`).join(', ')} not installed` : ''),
    );
  }
}

/** The path of a Node 22 binary (`npx -y node@22`), checked against the peers' engines. Throws when there is none. */
function node22() {
  const result = spawnSync('npx', ['-y', 'node@22', '-p', 'process.execPath + " " + process.version'], { encoding: 'utf8' });
  const [path, version] = (result.stdout ?? '').trim().split(/\s+/).slice(-2);
  if (result.status !== 0 || !path || !existsSync(path))
    throw new Error(`\`npx -y node@22\` failed (${result.status ?? result.error?.message}): ${String(result.stderr).trim().slice(-500)}`);
  const [major, minor] = version.slice(1).split('.').map(Number);
  for (const name of ['graphile-worker', 'pg-boss']) {
    const engines = JSON.parse(readFileSync(join(PEERS, 'node_modules', name, 'package.json'), 'utf8')).engines?.node ?? '';
    const [, needMajor, needMinor] = /(\d+)\.(\d+)/.exec(engines) ?? [];
    if (needMajor && (major < Number(needMajor) || (major === Number(needMajor) && minor < Number(needMinor))))
      throw new Error(`${name} needs Node ${engines}; \`npx -y node@22\` gave ${version}`);
  }
  return { path, version };
}

/** Distinct 1 KiB events (each a fresh tick_id), the same bytes for every system; a file each case reads. */
async function writeEvents(dir) {
  const events = new Array(WARM + LARGEST);
  for (let i = 0; i < events.length; i++) {
    const event = createTestEvent(ACTION);
    event.data.note = '';
    event.data.note = 'x'.repeat(1024 - Buffer.byteLength(JSON.stringify(event)));
    events[i] = event;
  }
  const file = join(dir, 'events.json');
  await writeFile(file, JSON.stringify(events));
  return file;
}

/** Runs one case in a process of its own on `node`; resolves with its RESULT line. Throws when the process fails. */
function runCase(node, testCase, settings) {
  const script =
    testCase.run !== 'inbox'
      ? join(PEERS, `${testCase.run}.mjs`)
      : testCase.root
        ? join(testCase.root, 'bench', 'worker-inbox.mjs')
        : fileURLToPath(new URL('./worker-inbox.mjs', import.meta.url));
  const config = {
    kind: testCase.kind ?? 'worker',
    options: testCase.options,
    requires: testCase.requires,
    apps: testCase.apps,
    ...settings,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(node, [...(process.env.BENCH_CHILD_ARGS ?? '').split(' ').filter(Boolean), script, JSON.stringify(config)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      const rest = out
        .split('\n')
        .filter((l) => l && !l.startsWith('RESULT '))
        .join('\n');
      if (rest) console.log(rest);
      if (code !== 0 || !line)
        reject(new Error(`worker case ${testCase.id} failed (exit ${code ?? signal})${line ? '' : ', no RESULT line'}`));
      else resolve(JSON.parse(line.slice('RESULT '.length)));
    });
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const perSecond = (n) => Math.round(n).toLocaleString('en-US');

// BENCH_WORKER_CASES=ours,ours-batched runs only those rows (the others print as skipped).
const ONLY = process.env.BENCH_WORKER_CASES?.split(',').filter(Boolean);

/** Rounds of every case in every way, the order of the cases reversed every other round; a case found skipped is not run again. */
async function measure(pool, node, eventsFile) {
  const runId = randomBytes(3).toString('hex');
  const results = new Map();
  for (const { key, way } of SETTINGS)
    for (const c of CASES)
      results.set(`${key}:${c.id}`, {
        rates: [],
        capped: 0,
        skipped:
          ONLY && !ONLY.includes(c.id)
            ? 'not in BENCH_WORKER_CASES'
            : !(c.ways ?? ['warm', 'cold']).includes(way)
              ? `not run ${way}`
              : undefined,
      });
  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const { key, way, total } of round % 2 === 0 ? SETTINGS : [...SETTINGS].reverse()) {
      const order = round % 2 === 0 ? CASES : [...CASES].reverse();
      for (const testCase of order) {
        const entry = results.get(`${key}:${testCase.id}`);
        if (entry.skipped) continue;
        const schema = `rack_webhooks_bench_${runId}_${n++}`;
        if (testCase.run === 'inbox') await pool.query(`CREATE SCHEMA ${schema}`); // the peers create theirs
        try {
          const result = await runCase(node.path, testCase, {
            url: DATABASE_URL,
            schema,
            eventsFile,
            warm: WARM,
            total,
            capSeconds: CAP_SECONDS,
            way,
          });
          if (result.skipped) entry.skipped = result.skipped;
          else {
            entry.rates.push(result.perSecond);
            if (result.capped) entry.capped++;
          }
        } catch (error) {
          // One failed round is printed and counted, not the end of a 20-minute run.
          console.log(`${way}: ${error.message}`);
          entry.failed = (entry.failed ?? 0) + 1;
        } finally {
          await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        }
      }
    }
  }
  return new Map([...results].map(([id, entry]) => [id, { ...entry, rate: entry.rates.length ? median(entry.rates) : undefined }]));
}

const HOW = {
  warm: (n) => `each case warmed up on ${n} first, then timed until empty`,
  cold: () => 'each case cold: a fresh schema and pool, no warm-up, graphile-worker through `runOnce`',
};

function printTable(results, { key, way, total }, node, serverVersion) {
  const base = results.get(`${key}:graphile-default`).rate ?? NaN;
  console.log(
    `\n### Worker throughput, ${way}: ${total.toLocaleString('en-US')} stored 1 KiB deliveries, a no-op handler, concurrency ${CONCURRENCY}, every system on Node ${node.version}, PostgreSQL ${serverVersion} (median of ${ROUNDS} alternating rounds; ${HOW[way](WARM)})\n`,
  );
  console.log('| case | deliveries/s | rounds | ratio to graphile-worker, default |');
  console.log('|---|---:|---:|---:|');
  for (const testCase of CASES) {
    const { rate, rates, capped, skipped, failed } = results.get(`${key}:${testCase.id}`);
    if (skipped) {
      if (!skipped.startsWith('not run')) console.log(`| ${testCase.name} | skipped: ${skipped} | | |`);
    } else
      console.log(
        `| ${testCase.name} | ${perSecond(rate)}${capped ? ` (${capped} round${capped > 1 ? 's' : ''} stopped at ${CAP_SECONDS} s)` : ''}${failed ? ` (${failed} round${failed > 1 ? 's' : ''} failed)` : ''} | ${rates.map(perSecond).join(', ')} | ${(rate / base).toFixed(2)}x |`,
      );
  }
}

/** One bar: PASS/MISS from checkBar, or SKIP (not met) when a side was not measured. */
function bar(results, label, id, against, value, comparison = '>=') {
  const [a, b] = [results.get(id), results.get(against)];
  if (a.rate === undefined || b.rate === undefined) {
    if ((a.skipped ?? b.skipped)?.startsWith('not run')) return true; // not a case of this way
    console.log(`SKIP  ${label}: not measured (${a.skipped ?? b.skipped})`);
    return false;
  }
  return checkBar(label, a.rate / b.rate, value, comparison);
}

function information(results, label, id, against) {
  const [a, b] = [results.get(id), results.get(against)];
  if (a?.rate !== undefined && b?.rate !== undefined) console.log(`information: ${label}: ${(a.rate / b.rate).toFixed(2)}x`);
}

export async function benchWorker() {
  ensurePeers(); // a peer that cannot be installed fails the group: a comparison without it means nothing
  const node = node22();
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2, connectionTimeoutMillis: 5000 });
  pool.on('error', () => {});
  let serverVersion;
  try {
    serverVersion = (await pool.query('SHOW server_version')).rows[0].server_version;
  } catch (error) {
    console.log(`\nPostgreSQL not reachable at ${DATABASE_URL} (${error.message}): worker benchmark skipped`);
    await pool.end();
    return { ok: false };
  }
  const dir = await mkdtemp(join(tmpdir(), 'rack-webhooks-bench-worker-'));
  let results;
  try {
    results = await measure(pool, node, await writeEvents(dir));
  } finally {
    await pool.end();
    await rm(dir, { recursive: true, force: true });
  }
  let ok = true;
  for (const setting of SETTINGS) {
    printTable(results, setting, node, serverVersion);
    const { key, way, total } = setting;
    const at = (id) => `${key}:${id}`;
    const label = SETTINGS.some((other) => other.total !== total) ? `${way} ${total.toLocaleString('en-US')}` : way;
    console.log('');
    ok = bar(results, `${label}: inbox worker / graphile-worker, default settings`, at('ours'), at('graphile-default'), 1.0) && ok;
    ok =
      bar(
        results,
        `${label}: inbox worker, mode 'batched' / graphile-worker, localQueue + batched completion`,
        at('ours-batched'),
        at('graphile-batched'),
        0.75,
      ) && ok;
    information(results, 'inbox worker / pg-boss, batches of 8', at('ours'), at('pg-boss'));
    information(results, "inbox worker, mode 'batched' / pg-boss, batches of 8", at('ours-batched'), at('pg-boss'));
    information(results, 'inbox worker / pg-boss, batches of 8, transactional', at('ours'), at('pg-boss-transactional'));
    information(
      results,
      "inbox worker / the pgbench replay of its own statements (the floor of today's design)",
      at('ours'),
      at('floor-pgbench'),
    );
    // Why the default mode can sit below graphile-worker: the statements its guarantees need (an
    // attempt committed before the handler, then the handler's transaction with the done-mark, on a
    // row kept as the log) replayed from C, with no SDK around them.
    information(results, 'that pgbench floor / graphile-worker, default settings', at('floor-pgbench'), at('graphile-default'));
    information(results, "inbox worker, mode 'batched' / the replay of its own statements", at('ours-batched'), at('floor-batched'));
    // Where the batched bar stands against what its statements allow on this machine, in this run.
    information(
      results,
      'that batched replay / graphile-worker, localQueue + batched completion',
      at('floor-batched'),
      at('graphile-batched'),
    );
    information(results, "inbox worker, mode 'batched' / the inbox worker, default mode", at('ours-batched'), at('ours'));
    information(results, 'inbox worker / the baseline build', at('ours'), at('baseline'));
    information(results, "inbox worker, mode 'batched' / the baseline build", at('ours-batched'), at('baseline-batched'));
    for (const testCase of CASES.filter((c) => c.ratioTo)) information(results, testCase.ratioLabel, at(testCase.id), at(testCase.ratioTo));
  }
  return { ok };
}
