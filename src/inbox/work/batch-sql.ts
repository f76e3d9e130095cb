import type { TableNames } from '../schema/table-name.js';

/**
 * The statements on many rows: `release` the loop sends in both modes, `complete` and `renew` only `mode: 'batched'`. Each
 * takes its rows as one JSON array in $1, typed text (postgres.js would JSON-encode a jsonb
 * parameter's string a second time), the same for every client (pg, postgres.js, PGlite), and
 * worker $2; each is one round trip that commits on its own.
 */
export interface BatchSql {
  /**
   * Records many outcomes: $1 `[{ id, attempt, state: 'done' | 'pending' | 'dead', delay_ms, error }]`.
   * A row whose attempt worker $2 no longer holds (its lease ran out, another worker took it) is
   * left alone; the ids recorded come back.
   */
  readonly complete: string;
  /** Gives back claimed rows whose handlers never started ($1 `[{ id, attempt }]`; stop(), or held ahead too long): their attempts are deleted. */
  readonly release: string;
  /** Extends the lease of the rows worker $2 holds ($1 `[id, ...]`) by $3 seconds from now. */
  readonly renew: string;
}

export function batchSql(names: TableNames): BatchSql {
  const t = names.deliveries;
  const a = names.attempts;
  return {
    complete: `WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::text::jsonb) AS i(id bigint, attempt integer, state text, delay_ms float8, error text)
), finished AS (
  UPDATE ${t} AS d SET state = i.state,
         done_at = CASE WHEN i.state = 'done' THEN now() ELSE d.done_at END,
         run_at = CASE WHEN i.state = 'pending' THEN now() + make_interval(secs => i.delay_ms / 1000) ELSE d.run_at END,
         locked_by = NULL, locked_until = NULL, last_error = i.error
    -- The rows by their primary key (an array: a generic plan of the join alone may scan the whole table).
    FROM input i WHERE d.id = ANY(ARRAY(SELECT id FROM input)) AND d.id = i.id
     AND d.state = 'running' AND d.locked_by = $2 AND d.attempts = i.attempt
  RETURNING d.id, i.attempt, i.state, i.error
), recorded AS (
  UPDATE ${a} AS x SET outcome = CASE WHEN f.state = 'done' THEN 'succeeded' ELSE 'failed' END, finished_at = now(), error = f.error
    FROM finished f WHERE x.delivery_id = f.id AND x.attempt = f.attempt
)
SELECT id::text AS id FROM finished`,
    release: `WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::text::jsonb) AS i(id bigint, attempt integer)
), released AS (
  UPDATE ${t} AS d SET state = 'pending', attempts = d.attempts - 1, locked_by = NULL, locked_until = NULL
    FROM input i WHERE d.id = ANY(ARRAY(SELECT id FROM input)) AND d.id = i.id
     AND d.state = 'running' AND d.locked_by = $2 AND d.attempts = i.attempt
  RETURNING d.id, i.attempt
)
DELETE FROM ${a} AS x USING released r WHERE x.delivery_id = r.id AND x.attempt = r.attempt`,
    renew: `UPDATE ${t} SET locked_until = now() + make_interval(secs => $3)
 WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text($1::text::jsonb)::bigint)) AND state = 'running' AND locked_by = $2`,
  };
}
