/**
 * The `due` CTEs of a claim with `order: 'per-app'`, read from the queue table (`t`: migration 10): per app, only the first unfinished delivery
 * in event order may start, and only while none of its app runs. 'hold': a pending one waiting for
 * its retry is first too, so it holds the rest; 'skip': only a due one is (a running one always
 * holds). Dead and done rows never hold. Rows without an app are unordered: every due one may start.
 *
 * What it must never read is an app's backlog. Asking each due row in event order whether its app
 * is free read every due row of a deep app at every claim (the LIMIT is never filled while that
 * app runs), and ordered claims follow one another, so one app's backlog slowed every app's. So:
 * - `early`: due rows in event order, each asked with one index probe, until $1 may start, but
 *   never beyond the first 4 x $1 + 16. When $1 of those may start, they are the answer: any other
 *   that may is later than all of them. That is the usual case (many apps, few running), and it
 *   reads rows in proportion to $1.
 * - Otherwise `walk`: each app with unfinished rows once, `firsts` going from one app's first
 *   row to the next app's down queue_app (a loose index scan, one descent per app), and the
 *   rows without an app from their own index (queue_noapp, $1 at most): in proportion to the
 *   number of apps.
 * `running` reads the running rows (queue_lease): as many as handlers run, whatever the backlog; it is
 * asked with NOT IN (no app in it is NULL), which hashes it once, where NOT EXISTS read it per row.
 */
export function orderedDue(t: string, onFailure: 'hold' | 'skip', earlyRows?: number): string {
  const unfinished = `state IN ('pending', 'running') AND app IS NOT NULL`;
  const row = 'app, event_ns, id, state, run_at';
  const early = earlyRows === undefined ? `4 * $1::bigint + 16` : String(Math.max(0, Math.trunc(earlyRows)));
  // The row that holds the app's later ones: 'hold', its first unfinished; 'skip', its first due pending one
  // (a running one holds them all: see running).
  const holds = onFailure === 'hold' ? '' : ` AND o.state = 'pending' AND o.run_at <= now()`;
  // 'skip': an app whose first row waits for its retry (or has no run_at) starts its first due one instead.
  const skipped =
    onFailure === 'hold'
      ? ''
      : `
  UNION ALL
  SELECT n.id, n.event_ns FROM firsts AS f CROSS JOIN LATERAL (
    SELECT id, event_ns FROM ${t} WHERE app = f.app AND ${unfinished} AND state = 'pending' AND run_at <= now()
     ORDER BY event_ns, id LIMIT 1
  ) AS n
   WHERE f.state = 'pending' AND (f.run_at <= now()) IS NOT TRUE AND f.app NOT IN (SELECT app FROM running)`;
  return `running AS (
  SELECT DISTINCT app FROM ${t} WHERE state = 'running' AND app IS NOT NULL
), early AS (
  -- Due rows in event order until the claim's limit may start, never beyond the first few.
  SELECT e.id, e.event_ns FROM (
    SELECT id, event_ns, app FROM ${t} WHERE state = 'pending' AND run_at <= now() ORDER BY event_ns, id LIMIT ${early}
  ) AS e
   WHERE e.app IS NULL OR (e.app NOT IN (SELECT app FROM running)
     -- The app's first row that holds is this one. Not an EXISTS over earlier rows: the planner may
     -- scan the table for that, where this is one descent of queue_app.
     AND (SELECT o.id FROM ${t} AS o WHERE o.app = e.app AND o.state IN ('pending', 'running') AND o.app IS NOT NULL${holds}
           ORDER BY o.event_ns, o.id LIMIT 1) = e.id)
   ORDER BY e.event_ns, e.id LIMIT $1
), enough AS (
  -- Counted only as far as needed: an OR stops at its first true, and an InitPlan runs when first read.
  SELECT (SELECT count(*) FROM early) >= $1::bigint
      OR (SELECT count(*) FROM (SELECT 1 FROM ${t} WHERE state = 'pending' AND run_at <= now() LIMIT ${early}) AS d) < ${early} AS yes
), firsts AS (
  (SELECT ${row} FROM ${t} WHERE ${unfinished} ORDER BY app, event_ns, id LIMIT 1)
  UNION ALL
  SELECT n.* FROM firsts AS f CROSS JOIN LATERAL (
    SELECT ${row} FROM ${t} WHERE ${unfinished} AND app > f.app ORDER BY app, event_ns, id LIMIT 1
  ) AS n
), walk AS (
  SELECT f.id, f.event_ns FROM firsts AS f
   WHERE f.state = 'pending' AND f.run_at <= now() AND f.app NOT IN (SELECT app FROM running)${skipped}
  UNION ALL
  (SELECT id, event_ns FROM ${t} WHERE state = 'pending' AND app IS NULL AND run_at <= now() ORDER BY event_ns, id LIMIT $1)
), candidates AS (
  -- The walk only when early was not enough: a CTE no branch reads is never run.
  SELECT id, event_ns FROM early WHERE (SELECT yes FROM enough)
  UNION ALL
  SELECT id, event_ns FROM walk WHERE NOT (SELECT yes FROM enough)
), due AS (
  -- Locked apart from the walk (FOR UPDATE cannot lock through a UNION), by their ids: an array,
  -- as in the plain claim. The states are checked again on the locked rows.
  SELECT id FROM ${t} WHERE id = ANY(ARRAY(SELECT id FROM candidates)) AND state = 'pending' AND run_at <= now()
   ORDER BY event_ns, id LIMIT $1 FOR UPDATE SKIP LOCKED
`;
}
