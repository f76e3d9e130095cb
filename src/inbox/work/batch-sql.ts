import type { TableNames } from '../schema/table-name.js';
import { TAKES_OUTCOME } from './sql.js';

/**
 * The statements on many rows: `release` and `abandon` the loop sends in both modes, `complete` and `renew` only `mode: 'batched'`. Each
 * takes its rows as one JSON array in $1, typed text (postgres.js would JSON-encode a jsonb
 * parameter's string a second time), the same for every client (pg, postgres.js, PGlite), and
 * worker $2; each is one round trip that commits on its own.
 */
export interface BatchSql {
  /**
   * Records many outcomes: $1 `[{ id, attempt, state: 'done' | 'pending' | 'dead', delay_ms, error, claimed_at }]`,
   * each attempt written with its outcome. A row whose attempt worker $2 no longer holds (its lease
   * ran out, another worker took it) is left alone; the ids recorded come back.
   */
  readonly complete: string;
  /** Gives back claimed rows whose handlers never started ($1 `[{ id, attempt }]`; stop(), or held ahead too long): their attempts uncounted. */
  readonly release: string;
  /**
   * stop() past its `timeoutMs`: the attempts still running ($1 `[{ id, attempt, claimed_at }]`)
   * end `abandoned` (error $4), their rows pending again now, or dead with no attempts left
   * ($3: maxAttempts). Rows locked by a live handler's transaction (the default mode) are skipped,
   * as recovery skips them: they are left to their lease.
   */
  readonly abandon: string;
  /** Extends the lease of the rows worker $2 holds ($1 `[id, ...]`) by $3 seconds from now. */
  readonly renew: string;
}

export function batchSql(names: TableNames): BatchSql {
  const t = names.deliveries;
  const a = names.attempts;
  return {
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
    release: `WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::text::jsonb) AS i(id bigint, attempt integer)
)
UPDATE ${t} AS d SET state = 'pending', attempts = d.attempts - 1, locked_by = NULL, locked_until = NULL
  FROM input i WHERE d.id = ANY(ARRAY(SELECT id FROM input)) AND d.id = i.id
   AND d.state = 'running' AND d.locked_by = $2 AND d.attempts = i.attempt`,
    abandon: `WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::text::jsonb) AS i(id bigint, attempt integer, claimed_at float8)
), queued AS (
  -- The queue row before the log row, as every statement that waits takes them; both skipped when locked.
  SELECT id FROM ${names.queue} WHERE id = ANY(ARRAY(SELECT id FROM input)) AND state = 'running' FOR UPDATE SKIP LOCKED
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
    renew: `UPDATE ${t} SET locked_until = now() + make_interval(secs => $3)
 WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text($1::text::jsonb)::bigint)) AND state = 'running' AND locked_by = $2`,
  };
}
