import type { TableNames } from '../schema/table-name.js';
import type { ResolvedWorkOptions } from './options.js';
import { orderedDue } from './ordered-claim.js';

/**
 * `batchSize`: the most rows one claim asks for (a whole number work() checked), written into the
 * claim's text; 1000 when the caller names none (tests, and statements read for what they find).
 * `earlyRows`: how many due rows an ordered claim asks one by one before it walks the apps; tests set it to reach the walk.
 */
export type WorkerSqlOptions = Pick<ResolvedWorkOptions, 'order' | 'onFailure'> & {
  readonly batchSize?: number;
  readonly earlyRows?: number | undefined;
};

/**
 * An attempt is written once, when it ends (INSERT with its outcome); a row already there, written
 * at its claim by an earlier version of the SDK, takes the outcome instead.
 */
export const TAKES_OUTCOME = `ON CONFLICT (delivery_id, attempt) DO UPDATE SET outcome = excluded.outcome, finished_at = excluded.finished_at,
     error = excluded.error, error_class = excluded.error_class, error_stack = excluded.error_stack`;

/**
 * The worker's statements. Each is one round trip and commits on its own (autocommit), except
 * `done`, which runs inside the handlers' transaction. The statements on many rows (`complete`,
 * `release`, `abandon`, `renew`) take them as one JSON array in $1, typed text (postgres.js would
 * JSON-encode a jsonb parameter's string a second time), the same for every client (pg,
 * postgres.js, PGlite), and worker $2.
 */
export function workerSql(names: TableNames, options: WorkerSqlOptions = { order: 'none', onFailure: 'hold' }) {
  const t = names.deliveries;
  const a = names.attempts;
  // Work is found in the queue (migration 10) and written in the log, whose triggers copy the
  // change back to the queue. Every statement that waits takes a delivery's queue row before its
  // log row, or skips what is locked, so two never wait on each other in opposite order.
  const q = names.queue;
  const cap = options.batchSize ?? 1000;
  const statements = {
    /** Takes up to $1 due rows for worker $2 with a lease of $3 seconds; records the attempt. */
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
    /**
     * With `order: 'per-app'`, taken (in the claim's transaction, before it) so that ordered claims
     * follow one another: each then sees every row the one before made running, which a claim's
     * own snapshot, taken as it starts, would not. Held only while claiming, never while handling.
     */
    orderLock: `SELECT pg_advisory_xact_lock(hashtext($1)) AS locked`,
    /** Rows whose worker stopped mid-attempt ($1: maxAttempts): pending again, or dead. */
    recover: `WITH expired AS (
  SELECT id FROM ${q} WHERE state = 'running' AND locked_until <= now()
   ORDER BY locked_until LIMIT 100 FOR UPDATE SKIP LOCKED
), held AS (
  -- A handler finishing late holds its log row (its done or fail statement) and then waits for the
  -- queue row this statement holds: skip such a row rather than wait for it.
  SELECT id, locked_by FROM ${t} WHERE id = ANY(ARRAY(SELECT id FROM expired)) AND state = 'running' FOR UPDATE SKIP LOCKED
), recovered AS (
  UPDATE ${t} AS d SET state = CASE WHEN d.attempts - d.attempt_base >= $1 THEN 'dead' ELSE 'pending' END,
         run_at = now(), locked_by = NULL, locked_until = NULL,
         last_error = 'attempt ' || d.attempts || ' did not finish: its worker stopped (killed, crashed or cut off from the database) before its lease ran out'
    FROM held h WHERE d.id = ANY(ARRAY(SELECT id FROM held)) AND d.id = h.id
  RETURNING d.id, d.attempts, d.state, d.action, h.locked_by
), closed AS (
  -- Its start is unknown (the attempt is written with its outcome): when recovery found it.
  INSERT INTO ${a} AS x (delivery_id, attempt, worker, started_at, finished_at, outcome, error)
  SELECT id, attempts, coalesce(locked_by, ''), now(), now(), 'crashed', 'the worker stopped during this attempt' FROM recovered
  ${TAKES_OUTCOME}
)
SELECT id::text AS id, attempts, state, action FROM recovered`,
    /**
     * The first statement of the handlers' transaction: marks delivery $1 done and its attempt $3
     * succeeded if worker $2 still holds that attempt (one row back), else nothing (the lease ran
     * out and another worker took it). Sent before the handlers, it also locks the row for them, so
     * that recovery skips it; a failing handler rolls the mark back with its own writes. One round
     * trip fewer than a lock before the handlers and the mark after them. $4: the claim's `claimed_at`.
     */
    done: `WITH finished AS (
  UPDATE ${t} SET state = 'done', done_at = now(), locked_by = NULL, locked_until = NULL, last_error = NULL
   WHERE id = $1::bigint AND state = 'running' AND locked_by = $2 AND attempts = $3 RETURNING id
), succeeded AS (
  INSERT INTO ${a} AS x (delivery_id, attempt, worker, started_at, finished_at, outcome)
  SELECT id, $3::integer, $2::text, to_timestamp($4::float8), now(), 'succeeded' FROM finished
  ${TAKES_OUTCOME}
)
SELECT id::text AS id FROM finished`,
    /**
     * After a failed attempt: pending again at $4 ms from now, or dead ($5); the attempt written
     * with error $6, class $7, stack $8, started at $9 (the claim's `claimed_at`). One row back if recorded.
     */
    fail: `WITH failed AS (
  UPDATE ${t} SET state = CASE WHEN $5 THEN 'dead' ELSE 'pending' END,
         run_at = now() + make_interval(secs => $4::float8 / 1000), locked_by = NULL, locked_until = NULL, last_error = $6
   WHERE id = $1::bigint AND state = 'running' AND locked_by = $2 AND attempts = $3 RETURNING id
)
INSERT INTO ${a} AS x (delivery_id, attempt, worker, started_at, finished_at, outcome, error, error_class, error_stack)
SELECT id, $3::integer, $2::text, to_timestamp($9::float8), now(), 'failed', $6::text, $7::text, $8::text FROM failed
${TAKES_OUTCOME}
RETURNING delivery_id::text AS id`,
    /**
     * For drain(): one delivery still to finish, if any: due and pending, or running on any worker
     * (a dead one's too), with how many ms until its lease runs out; pending ones first. No FOR
     * UPDATE: a row a live handler holds locked is still running, and must be seen.
     */
    unfinished: `SELECT state, greatest(0, extract(epoch FROM coalesce(locked_until, now()) - now()) * 1000)::float8 AS lease_ms
  FROM ${q} WHERE (state = 'pending' AND run_at <= now()) OR state = 'running'
 ORDER BY state = 'running', lease_ms LIMIT 1`,
    /**
     * Records many outcomes: $1 `[{ id, attempt, state: 'done' | 'pending' | 'dead', delay_ms, error, claimed_at }]`,
     * each attempt written with its outcome. A row whose attempt worker $2 no longer holds (its lease
     * ran out, another worker took it) is left alone; the ids recorded come back. Batched mode only.
     */
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
  ${TAKES_OUTCOME}
)
SELECT id::text AS id FROM finished`,
    /** Gives back claimed rows whose handlers never started ($1 `[{ id, attempt }]`; stop(), or held ahead too long): their attempts uncounted. */
    release: `WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::text::jsonb) AS i(id bigint, attempt integer)
)
UPDATE ${t} AS d SET state = 'pending', attempts = d.attempts - 1, locked_by = NULL, locked_until = NULL
  FROM input i WHERE d.id = ANY(ARRAY(SELECT id FROM input)) AND d.id = i.id
   AND d.state = 'running' AND d.locked_by = $2 AND d.attempts = i.attempt`,
    /**
     * stop() past its `timeoutMs`: the attempts still running ($1 `[{ id, attempt, claimed_at }]`)
     * end `abandoned` (error $4), their rows pending again now, or dead with no attempts left
     * ($3: maxAttempts). Rows locked by a live handler's transaction (the default mode) are skipped,
     * as recovery skips them: they are left to their lease.
     */
    abandon: `WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::text::jsonb) AS i(id bigint, attempt integer, claimed_at float8)
), queued AS (
  -- The queue row before the log row, as every statement that waits takes them; both skipped when locked.
  SELECT id FROM ${q} WHERE id = ANY(ARRAY(SELECT id FROM input)) AND state = 'running' FOR UPDATE SKIP LOCKED
), held AS (
  SELECT id FROM ${t} WHERE id = ANY(ARRAY(SELECT id FROM queued)) AND state = 'running' AND locked_by = $2 FOR UPDATE SKIP LOCKED
), abandoned AS (
  UPDATE ${t} AS d SET state = CASE WHEN d.attempts - d.attempt_base >= $3 THEN 'dead' ELSE 'pending' END,
         run_at = now(), locked_by = NULL, locked_until = NULL, last_error = $4
    FROM input i WHERE d.id = ANY(ARRAY(SELECT id FROM held)) AND d.id = i.id AND d.attempts = i.attempt
  RETURNING d.id, i.attempt, i.claimed_at
)
INSERT INTO ${a} AS x (delivery_id, attempt, worker, started_at, finished_at, outcome, error)
SELECT id, attempt, $2::text, to_timestamp(claimed_at), now(), 'abandoned', $4::text FROM abandoned
${TAKES_OUTCOME}`,
    /** Extends the lease of the rows worker $2 holds ($1 `[id, ...]`) by $3 seconds from now (batched mode). */
    renew: `UPDATE ${t} SET locked_until = now() + make_interval(secs => $3)
 WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text($1::text::jsonb)::bigint)) AND state = 'running' AND locked_by = $2`,
  };
  if (options.order === 'none') return statements;
  // The same claim with its due CTE replaced: the rows it updates, records and returns are the same.
  const afterDue = statements.claim.slice(statements.claim.indexOf('), claimed AS ('));
  return { ...statements, claim: `WITH RECURSIVE ${orderedDue(q, options.onFailure, options.earlyRows)}${afterDue}` };
}

export type WorkerSql = ReturnType<typeof workerSql>;
