// Floors for the inbox benchmarks: the same insert the inbox makes per delivery, with nothing of
// the SDK around it. The inbox rows are reported as ratios to these, measured in the same run, so
// the machine's state moves the floor and the candidate alike.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const COLUMNS = 'body, signature, signed_at, secret_index, action, event_time, event_ns, app, tick_id, replay_key, event_key, state, run_at';
const SIGNED_AT = 1_795_000_000; // 2026-11-18T11:06:40Z
const ACTION = 'app:budget:cap';
const EVENT_TIME = '2026-11-18T11:06:40.123456789Z'; // SIGNED_AT, with the nanoseconds the events carry
// A 1 KiB body, like the receive benchmarks'. Random bytes: nothing downstream may compress it.
const BODY = randomBytes(1024);
const SIGNATURE = `t=${SIGNED_AT},v1=${randomBytes(32).toString('hex')}`;

/** Where pgbench is: PATH (.ci/run puts Debian's /usr/lib/postgresql/NN/bin there), else Debian's directory. */
export function findPgbench() {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, 'pgbench'))) return join(dir, 'pgbench');
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) if (existsSync(join(root, version, 'bin', 'pgbench'))) return join(root, version, 'bin', 'pgbench');
  throw new Error('pgbench not found on PATH or under /usr/lib/postgresql/*/bin (Debian ships it in postgresql-NN)');
}

/**
 * Inserts per second from `clients` concurrent pgbench connections, each inserting one delivery
 * per transaction (autocommit, as the inbox does). `mode` is pgbench's -M: 'prepared' (parse once,
 * as postgres.js does by default: the cheapest, so the floor) or 'extended' (parse on every insert,
 * as pg's `pool.query(text, values)` does). Not 'simple': it pastes variables into the SQL text
 * unquoted. The body, signature and keys travel as parameters on every insert, as the SDK's do.
 * `table` must exist (migrated); it grows by tens of thousands of rows a second, and a bigger
 * table is a slower one, so give the floor and the SDK's rows tables of the same size.
 */
export async function pgbenchInsertFloor({ url, table, clients = 32, seconds = 5, eventKey = false, mode = 'prepared' }) {
  // pgbench has no strings, only integers: keys are client id and two random 63-bit numbers,
  // concatenated server-side to about the SDK's lengths. ON CONFLICT DO NOTHING as the inbox's
  // claim does, though a collision here is as unlikely as one of SHA-256.
  // Integer variables are untyped parameters: cast them where an operator needs a type.
  const tick = `'tick-' || :client_id::text || '-' || :r1::text`;
  const script = `\\set r1 random(1, 9223372036854775806)
\\set r2 random(1, 9223372036854775806)
\\set ns ${SIGNED_AT}000000000 + random(0, 999999999)
INSERT INTO ${table} (${COLUMNS}) VALUES (:body, :signature, ${SIGNED_AT}, 0, :action, :event_time, :ns, 'billing-api', ${tick}, 'replay:${SIGNED_AT}:' || :client_id::text || '-' || :r1::text || '-' || :r2::text, ${eventKey ? `'event:' || :action || ':' || ${tick}` : 'NULL'}, 'pending', now()) ON CONFLICT DO NOTHING;
`;
  if (mode !== 'prepared' && mode !== 'extended') throw new TypeError(`mode must be 'prepared' or 'extended', got ${mode}`);
  const dir = await mkdtemp(join(tmpdir(), 'rack-webhooks-pgbench-'));
  try {
    const file = join(dir, 'insert.sql');
    await writeFile(file, script);
    const args = ['-n', '-M', mode, '-c', String(clients), '-j', String(Math.min(2, clients)), '-T', String(seconds), '-f', file];
    // Strings as -D variables, so they travel as parameters of the prepared insert, as the SDK's
    // do. They also must: pgbench replaces :name even inside quotes ('app:budget:cap').
    for (const [name, value] of Object.entries({ body: `\\x${BODY.toString('hex')}`, signature: SIGNATURE, action: ACTION, event_time: EVENT_TIME })) {
      args.push('-D', `${name}=${value}`);
    }
    args.push(url);
    const { stdout } = await run(findPgbench(), args, { maxBuffer: 16 << 20 }).catch((error) => {
      // Every client repeats the same error: show each once, and not the 2 KiB command line.
      const lines = [...new Set(String(error.stderr ?? '').split('\n').filter(Boolean))].slice(0, 5);
      throw new Error(`pgbench exited with ${error.code ?? error.signal}:\n${lines.join('\n') || error.message}`);
    });
    const tps = /^tps = ([\d.]+) \(without initial connection time\)/m.exec(stdout);
    const processed = /^number of transactions actually processed: (\d+)/m.exec(stdout);
    const failed = /^number of failed transactions: (\d+)/m.exec(stdout);
    if (!tps || !processed || Number(processed[1]) === 0) throw new Error(`pgbench measured nothing:\n${stdout}`);
    if (failed && Number(failed[1]) > 0) throw new Error(`pgbench: ${failed[1]} transactions failed:\n${stdout}`);
    return { tps: Number(tps[1]) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Inserts per second into PGlite, one parameterized insert at a time from JS: PGlite runs one
 * query at a time in this thread, so there is no concurrency to add. Parameters are built before
 * the clock starts; a short warm-up keeps the first plans and page allocations out of the figure.
 */
export async function pgliteInsertFloor({ database, table, count = 2000, eventKey = false }) {
  const sql = `INSERT INTO ${table} (${COLUMNS}) VALUES ($1, $2, $3, 0, $4, $5, $6, 'billing-api', $7, $8, $9, 'pending', now()) ON CONFLICT DO NOTHING`;
  const params = (n) =>
    Array.from({ length: n }, () => {
      const tick = randomBytes(16).toString('hex');
      const ns = BigInt(SIGNED_AT) * 1_000_000_000n + BigInt(Math.floor(Math.random() * 1e9));
      return [BODY, SIGNATURE, SIGNED_AT, ACTION, EVENT_TIME, ns.toString(), tick, `replay:${SIGNED_AT}:${randomBytes(32).toString('base64url')}`, eventKey ? `event:${ACTION}:${tick}` : null];
    });
  for (const row of params(Math.min(100, count))) await database.query(sql, row);
  const rows = params(count);
  const start = performance.now();
  for (const row of rows) await database.query(sql, row);
  return { perSecond: (count * 1000) / (performance.now() - start) };
}
