// Floors for the inbox benchmarks: the same insert the inbox makes per delivery, and the same
// statements its worker sends per delivery, with nothing of the SDK around them. The inbox rows are
// reported as ratios to these, measured in the same run, so the machine's state moves the floor and
// the candidate alike.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

const COLUMNS = 'body, signature, signed_at, secret_index, action, event_time, event_ns, app, tick_id, body_key, event_key, state, run_at';
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
  const args = ['-M', mode, '-T', String(seconds)];
  // Strings as -D variables, so they travel as parameters of the prepared insert, as the SDK's
  // do. They also must: pgbench replaces :name even inside quotes ('app:budget:cap').
  for (const [name, value] of Object.entries({
    body: `\\x${BODY.toString('hex')}`,
    signature: SIGNATURE,
    action: ACTION,
    event_time: EVENT_TIME,
  })) {
    args.push('-D', `${name}=${value}`);
  }
  return runPgbench({ url, clients, script, args });
}

/** Runs one pgbench script (`-n`: no vacuum of pgbench's own tables) and reads its tps. */
async function runPgbench({ url, clients, script, args }) {
  const dir = await mkdtemp(join(tmpdir(), 'rack-webhooks-pgbench-'));
  try {
    const file = join(dir, 'script.sql');
    await writeFile(file, script);
    const allArgs = ['-n', '-c', String(clients), '-j', String(Math.min(2, clients)), ...args, '-f', file, url];
    const { stdout } = await run(findPgbench(), allArgs, { maxBuffer: 16 << 20 }).catch((error) => {
      // Every client repeats the same error: show each once, and not the 2 KiB command line.
      const lines = [
        ...new Set(
          String(error.stderr ?? '')
            .split('\n')
            .filter(Boolean),
        ),
      ].slice(0, 5);
      throw new Error(`pgbench exited with ${error.code ?? error.signal}:\n${lines.join('\n') || error.message}`);
    });
    const tps = /^tps = ([\d.]+) \(without initial connection time\)/m.exec(stdout);
    const processed = /^number of transactions actually processed: (\d+)/m.exec(stdout);
    const failed = /^number of failed transactions: (\d+)/m.exec(stdout);
    if (!tps || !processed || Number(processed[1]) === 0) throw new Error(`pgbench measured nothing:\n${stdout}`);
    if (failed && Number(failed[1]) > 0) throw new Error(`pgbench: ${failed[1]} transactions failed:\n${stdout}`);
    return { tps: Number(tps[1]), processed: Number(processed[1]) };
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
      return [
        BODY,
        SIGNATURE,
        SIGNED_AT,
        ACTION,
        EVENT_TIME,
        ns.toString(),
        tick,
        `replay:${SIGNED_AT}:${randomBytes(32).toString('base64url')}`,
        eventKey ? `event:${ACTION}:${tick}` : null,
      ];
    });
  for (const row of params(Math.min(100, count))) await database.query(sql, row);
  const rows = params(count);
  const start = performance.now();
  for (const row of rows) await database.query(sql, row);
  return { perSecond: (count * 1000) / (performance.now() - start) };
}

// ---------------------------------------------------------------------------------------------
// Floors for the worker: its required statements with no SDK JavaScript around them.

/**
 * The worker's claim and done statements, copied from src/inbox/work/sql.ts (`workerSql`), and
 * `mode: 'batched'`'s complete, from the same `workerSql`:
 * `t`, `a` and `q` are the quoted deliveries, attempts and queue tables. `checkWorkerStatements` holds these
 * copies to the built package, so an edit to either side fails the run instead of measuring a
 * statement the worker no longer sends.
 */
export function workerStatements(t, a, q, cap = 1000, takesOutcome = TAKES_OUTCOME) {
  return {
    claim: `WITH due AS (
  -- Only a pending row has a run_at in the queue: no state here, so the planner, even before the
  -- queue's first ANALYZE, reads queue_due in order instead of sorting every pending row.
  SELECT id FROM ${q} WHERE run_at <= now()
   -- Of what is due, the oldest event first: run_at is arrival (or retry) time, not event time.
   -- The cap is written in, the count asked ($1) applied as due is read (rows are locked as read): with
   -- LIMIT $1 here a generic plan guessed a tenth of the queue, so PostgreSQL planned every claim anew.
   ORDER BY event_ns, id LIMIT ${cap} FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE ${t} AS d SET state = 'running', attempts = d.attempts + 1, locked_by = $2,
         locked_until = now() + make_interval(secs => $3)
   -- An array, not a join: a generic plan of a join to due hashes the whole table (a seq scan that grows with the log).
   WHERE d.id = ANY(ARRAY(SELECT id FROM due LIMIT $1)) AND d.state = 'pending'
  RETURNING d.id, d.body, d.attempts, d.attempt_base, d.replayed_at, d.event_ns, d.action, d.app, d.trace_context, d.origin
)
-- The attempt is counted here (attempts + 1, against maxAttempts even if the process dies) and
-- written once, with its outcome; claimed_at becomes its started_at.
SELECT id::text AS id, body, attempts, attempt_base, replayed_at, action, app, trace_context, origin,
       extract(epoch FROM now())::float8 AS claimed_at
  FROM claimed ORDER BY claimed.event_ns, claimed.id`,
    done: `WITH finished AS (
  UPDATE ${t} SET state = 'done', done_at = now(), locked_by = NULL, locked_until = NULL, last_error = NULL
   WHERE id = $1::bigint AND state = 'running' AND locked_by = $2 AND attempts = $3 RETURNING id
), succeeded AS (
  INSERT INTO ${a} AS x (delivery_id, attempt, worker, started_at, finished_at, outcome)
  SELECT id, $3::integer, $2::text, to_timestamp($4::float8), now(), 'succeeded' FROM finished
  ${takesOutcome}
)
SELECT id::text AS id FROM finished`,
    complete: `WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::text::jsonb) AS i(id bigint, attempt integer, state text, delay_ms float8, error text, claimed_at float8)
), finished AS (
  UPDATE ${t} AS d SET state = i.state,
         done_at = CASE WHEN i.state = 'done' THEN now() ELSE d.done_at END,
         run_at = CASE WHEN i.state = 'pending' THEN now() + make_interval(secs => i.delay_ms / 1000) ELSE d.run_at END,
         locked_by = NULL, locked_until = NULL, last_error = i.error
    -- The rows by their primary key (an array: a generic plan of the join alone may scan the whole table).
    FROM input i WHERE d.id = ANY(ARRAY(SELECT id FROM input)) AND d.id = i.id
     AND d.state = 'running' AND d.locked_by = $2 AND d.attempts = i.attempt
  RETURNING d.id, i.attempt, i.state, i.error, i.claimed_at
), recorded AS (
  INSERT INTO ${a} AS x (delivery_id, attempt, worker, started_at, finished_at, outcome, error)
  SELECT id, attempt, $2::text, to_timestamp(claimed_at), now(), CASE WHEN state = 'done' THEN 'succeeded' ELSE 'failed' END, error FROM finished
  ${takesOutcome}
)
SELECT id::text AS id FROM finished`,
  };
}

/** src/inbox/work/sql.ts's TAKES_OUTCOME (the checker holds the statements to it by name). */
const TAKES_OUTCOME = `ON CONFLICT (delivery_id, attempt) DO UPDATE SET outcome = excluded.outcome, finished_at = excluded.finished_at,
     error = excluded.error, error_class = excluded.error_class, error_stack = excluded.error_stack`;

/** The quoted table names the inbox derives from 'schema.table' (src/inbox/schema/table-name.ts). */
export function quotedTables(table) {
  const parts = table.split('.');
  const bare = parts.pop();
  const prefix = parts.length === 1 ? `"${parts[0]}".` : '';
  return { deliveries: `${prefix}"${bare}"`, attempts: `${prefix}"${bare}_attempts"`, queue: `${prefix}"${bare}_queue"` };
}

/** Throws unless exactly `expected` rows are done, none running, and each has its succeeded attempt. */
async function checkDone(pool, table, expected, floorName) {
  const { deliveries, attempts } = quotedTables(table);
  const { rows } =
    await pool.query(`SELECT count(*) FILTER (WHERE state = 'done')::int AS done, count(*) FILTER (WHERE state = 'running')::int AS running,
    (SELECT count(*)::int FROM ${attempts} WHERE outcome = 'succeeded') AS succeeded FROM ${deliveries}`);
  const { done, running, succeeded } = rows[0];
  if (done !== expected || running !== 0 || succeeded !== expected)
    throw new Error(`${floorName}: expected ${expected} done, the table has ${JSON.stringify(rows[0])}`);
}

/**
 * Throws unless each copied statement appears in the built `rack-webhooks/inbox` as a template
 * literal, with any `${name}` where the copy has a table. Run `npx tsup` after editing sql.ts.
 */
export function checkWorkerStatements() {
  const file = fileURLToPath(import.meta.resolve('rack-webhooks/inbox'));
  const built = readFileSync(file, 'utf8');
  const T = '\u0000T\u0000';
  const A = '\u0000A\u0000';
  const Q = '\u0000Q\u0000';
  const C = '\u0000C\u0000';
  const O = '\u0000O\u0000';
  if (!built.includes(`\`${TAKES_OUTCOME}\``)) throw new Error(`bench/inbox-floors.mjs: TAKES_OUTCOME no longer matches ${file}`);
  for (const [key, text] of Object.entries(workerStatements(T, A, Q, C, O))) {
    const escaped = text
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      .replaceAll(T, '\\$\\{\\w+\\}')
      .replaceAll(A, '\\$\\{\\w+\\}')
      .replaceAll(Q, '\\$\\{\\w+\\}')
      .replaceAll(C, '\\$\\{\\w+\\}')
      .replaceAll(O, '\\$\\{\\w+\\}');
    if (!new RegExp(`${key}:\\s*\`${escaped}\``).test(built)) {
      throw new Error(
        `bench/inbox-floors.mjs: the worker's \`${key}\` statement no longer matches ${file}: copy it again from src/inbox/work/sql.ts (and rebuild)`,
      );
    }
  }
}

/**
 * The worker's required statements replayed from plain pg, as named (prepared once per
 * connection) statements, as the SDK sends them: `lanes` loops, each claiming up to `claimBatch`
 * rows (autocommit), then per row checking a pooled client out for BEGIN, done (which locks), COMMIT. No
 * receiver, no parse, no handler, no bookkeeping. Stops claiming after `seconds`, as the worker
 * rows do; resolves with rows done per second and claims per row.
 */
export async function replayWorkerStatements({ pool, table, lanes, claimBatch, seconds }) {
  const { deliveries, attempts, queue } = quotedTables(table);
  const sql = workerStatements(deliveries, attempts, queue, claimBatch);
  const name = (key) => `bench_floor_${key}_${table}`;
  const workerId = 'bench-floor';
  let claims = 0;
  let done = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const lane = async () => {
    while (performance.now() < deadline) {
      claims++;
      const { rows } = await pool.query({ name: name('claim'), text: sql.claim, values: [claimBatch, workerId, 30] });
      if (rows.length === 0) return;
      for (const row of rows) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const held = await client.query({ name: name('done'), text: sql.done, values: [row.id, workerId, row.attempts, row.claimed_at] });
          if (held.rows.length !== 1) throw new Error(`the floor lost its own claim on row ${row.id}`);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
        done++;
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  const elapsed = performance.now() - started;
  await checkDone(pool, table, done, 'the replay floor');
  return { perSecond: (done * 1000) / elapsed, claimsPerRow: claims / Math.max(1, done) };
}

/**
 * `mode: 'batched'`'s statements replayed from plain pg, named, as the worker sends them: claims of
 * `batch` rows (each counts their attempts), and one complete per claimed batch (which writes them), a completion
 * overlapping the next claim on another connection as the worker's do. No receiver, no parse, no
 * handler. Resolves with rows done per second.
 */
export async function replayBatchedStatements({ pool, table, batch }) {
  const { deliveries, attempts, queue } = quotedTables(table);
  const sql = workerStatements(deliveries, attempts, queue, batch);
  const name = (key) => `bench_floor_batched_${key}`; // one table a process; a longer name passes 63 characters
  const workerId = 'bench-floor';
  let done = 0;
  let completing = Promise.resolve();
  const started = performance.now();
  for (;;) {
    const { rows } = await pool.query({ name: name('claim'), text: sql.claim, values: [batch, workerId, 30] });
    await completing; // one completion at a time, as the worker's
    if (rows.length === 0) break;
    const input = JSON.stringify(
      rows.map((row) => ({ id: row.id, attempt: row.attempts, state: 'done', delay_ms: 0, error: null, claimed_at: row.claimed_at })),
    );
    completing = pool.query({ name: name('complete'), text: sql.complete, values: [input, workerId] }).then((result) => {
      if (result.rows.length !== rows.length) throw new Error('the batched floor lost its own claims');
      done += rows.length;
    });
  }
  const elapsed = performance.now() - started;
  await checkDone(pool, table, done, 'the batched replay floor');
  return { perSecond: (done * 1000) / elapsed };
}

/**
 * The same statements from pgbench (C, `-M prepared`), `clients` connections each running
 * `perClient` times: the claim (autocommit, one row: pgbench's `\gset` takes exactly one row, and
 * has no loops), then BEGIN, done (which locks), COMMIT. `clients * perClient` must not exceed the pending
 * rows, so every claim finds one. `pool` checks the table afterwards. Resolves with rows done per second.
 */
export async function pgbenchWorkerFloor({ pool, url, table, clients, perClient }) {
  const { deliveries, attempts, queue } = quotedTables(table);
  const sql = workerStatements(deliveries, attempts, queue, 1);
  // pgbench variables for the parameters: $1 .. $3 of each statement, in order. Comments go first:
  // pgbench reads a :name in a comment as a parameter too, one whose type nothing determines.
  const bind = (text, vars) => text.replace(/--[^\n]*/g, '').replace(/\$(\d)/g, (_, n) => `:${vars[Number(n) - 1]}`);
  const script = `${bind(sql.claim, ['batch', 'worker', 'lease'])} \\gset c_
BEGIN;
${bind(sql.done, ['c_id', 'worker', 'c_attempts', 'c_claimed_at'])};
COMMIT;
`;
  const args = ['-M', 'prepared', '-t', String(perClient), '-D', 'batch=1', '-D', 'worker=bench-pgbench-floor', '-D', 'lease=30'];
  const { tps, processed } = await runPgbench({ url, clients, script, args });
  if (processed !== clients * perClient) throw new Error(`pgbench processed ${processed} of ${clients * perClient} deliveries`);
  await checkDone(pool, table, processed, 'the pgbench worker floor');
  return { tps };
}
