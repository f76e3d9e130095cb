import { indexName, quoteIdentifier, type TableNames } from './table-name.js';

const QUEUE_COLUMNS = 'id, state, event_ns, app, run_at, locked_until';
const pendingRunAt = (row: string) => `CASE WHEN ${row}state = 'pending' THEN ${row}run_at END`;
/** The changed rows that are not done, copied into the queue (a row already there only when a copied column differs). */
const upsertChanged = (q: string) => `INSERT INTO ${q} AS x (${QUEUE_COLUMNS})
    SELECT id, state, event_ns, app, ${pendingRunAt('')}, locked_until FROM changed WHERE state <> 'done'
    ON CONFLICT (id) DO UPDATE SET state = excluded.state, event_ns = excluded.event_ns, app = excluded.app,
           run_at = excluded.run_at, locked_until = excluded.locked_until
     WHERE (x.state, x.event_ns, x.app, x.run_at, x.locked_until)
           IS DISTINCT FROM (excluded.state, excluded.event_ns, excluded.app, excluded.run_at, excluded.locked_until);`;
/** For an update (migration 11 on): the done rows leave the queue, the others are upserted, in one statement (their ids never overlap). */
const syncUpdated = (q: string) => `WITH finished AS (
      DELETE FROM ${q} WHERE id = ANY(ARRAY(SELECT id FROM changed WHERE state = 'done'))
    )
    ${upsertChanged(q)}`;
const syncFunction = (names: TableNames) => `${names.schemaPrefix}${quoteIdentifier(`${names.bare}_queue_sync`)}`;

/**
 * Migration 10. A delivery's row is written three times on its way (stored, claimed, done); each
 * write of a row whose state is in an index put a new entry in every index of the table (22 WAL
 * records a delivery), because PostgreSQL can update a row in place (HOT) only when no indexed
 * column changes, partial indexes' conditions included. So every index that reads `state`, the
 * lease or the due time moves to `<table>_queue`, one narrow row per delivery that is not done,
 * and the log keeps half of each page free (fillfactor 50) for its in-place updates: the worker's
 * writes to the log now touch no index. Measured on the worker's own statements: about 2x in
 * `mode: 'batched'` and 1.3x in the default mode, WAL per delivery from 4.4 to 1.2 kB.
 *
 * Triggers keep the queue: every INSERT, UPDATE, DELETE or TRUNCATE of the log, the SDK's or
 * anyone's (a fix by hand in psql), updates it in the same statement, so the two never disagree
 * and the statements that write the log need no second write. The log stays the truth; the queue
 * holds copies of the columns that find work. Updates and deletes: statement triggers over the
 * changed rows, one call per statement whatever its row count; inserts (one row each, from the
 * receiver): a row trigger. Created before the copy of the rows not done, so a write
 * from a process still on version 9 waits for this migration (CREATE TRIGGER locks the table
 * against writes) and then passes through the trigger.
 */
export function queueMigration(names: TableNames): string {
  const d = names.deliveries;
  const q = names.queue;
  const sync = syncFunction(names);
  const queued = `${names.schemaPrefix}${quoteIdentifier(`${names.bare}_queue_insert`)}`;
  return `CREATE TABLE ${q} (
  id            bigint      PRIMARY KEY,
  state         text        NOT NULL,
  event_ns      bigint      NOT NULL,
  app           text,
  run_at        timestamptz,
  locked_until  timestamptz
);
COMMENT ON COLUMN ${q}.run_at IS 'When a pending delivery is due; NULL in every other state (the log''s run_at keeps its last value)';
COMMENT ON TABLE ${q} IS 'One row per delivery that is not done, copied from the log by its triggers: what the worker claims and what reads by state find';
-- The claim walks pending rows in event order and takes the due ones. It asks run_at <= now()
-- alone, which only pending rows can meet: before the table is first analyzed (a burst after an
-- empty queue), the planner's default guess for state = 'pending' is 1 row in 200, and with it
-- the claim sorted every pending row each time instead of reading this index in order.
CREATE INDEX ${indexName(names, 'queue_due')} ON ${q} (event_ns, id) WHERE run_at IS NOT NULL;
CREATE INDEX ${indexName(names, 'queue_noapp')} ON ${q} (event_ns, id) WHERE state = 'pending' AND app IS NULL;
CREATE INDEX ${indexName(names, 'queue_app')} ON ${q} (app, event_ns, id) WHERE state IN ('pending', 'running') AND app IS NOT NULL;
CREATE INDEX ${indexName(names, 'queue_lease')} ON ${q} (locked_until) WHERE state = 'running';
-- Dead, ignored and duplicate rows by state: pending and running ones have their own indexes above,
-- and one entry fewer per claim.
CREATE INDEX ${indexName(names, 'queue_state')} ON ${q} (state, event_ns, id) WHERE state NOT IN ('pending', 'running');
-- A stored delivery: one row, one INSERT (a row trigger: a third cheaper than a statement trigger
-- with its changed rows, on the receiver's one-row inserts).
CREATE FUNCTION ${queued}() RETURNS trigger LANGUAGE plpgsql AS $queued$
BEGIN
  INSERT INTO ${q} (${QUEUE_COLUMNS}) VALUES (NEW.id, NEW.state, NEW.event_ns, NEW.app, ${pendingRunAt('NEW.')}, NEW.locked_until);
  RETURN NULL;
END
$queued$;
-- Updates and deletes: once per statement, whatever its row count (the batched worker's 400 rows).
-- enable_seqscan off: the delete by ids reads the primary key whatever the queue's size when the
-- plan was made; a plan kept from when the queue was small scanned it whole, once per delivery
-- done, after it had grown (seen: the default mode at half its speed). Its other statements read
-- only the changed rows, or the primary key through ON CONFLICT.
CREATE FUNCTION ${sync}() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $sync$
DECLARE
  finished bigint[];
  changed_count bigint;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    TRUNCATE ${q};
    RETURN NULL;
  END IF;
  SELECT array_agg(id) FILTER (WHERE TG_OP = 'DELETE' OR state = 'done'), count(*) INTO finished, changed_count FROM changed;
  IF finished IS NOT NULL THEN
    DELETE FROM ${q} WHERE id = ANY(finished);
  END IF;
  -- Only when some changed row is not done (a delivery marked done needs no upsert).
  IF TG_OP = 'UPDATE' AND changed_count > coalesce(cardinality(finished), 0) THEN
    ${upsertChanged(q)}
  END IF;
  RETURN NULL;
END
$sync$;
CREATE TRIGGER queue_on_insert AFTER INSERT ON ${d} FOR EACH ROW WHEN (NEW.state <> 'done') EXECUTE FUNCTION ${queued}();
CREATE TRIGGER queue_on_update AFTER UPDATE ON ${d} REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION ${sync}();
CREATE TRIGGER queue_on_delete AFTER DELETE ON ${d} REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION ${sync}();
CREATE TRIGGER queue_on_truncate AFTER TRUNCATE ON ${d} FOR EACH STATEMENT EXECUTE FUNCTION ${sync}();
INSERT INTO ${q} (${QUEUE_COLUMNS}) SELECT id, state, event_ns, app, ${pendingRunAt('')}, locked_until FROM ${d} WHERE state <> 'done';
DROP INDEX ${names.schemaPrefix}${indexName(names, 'due')};
DROP INDEX ${names.schemaPrefix}${indexName(names, 'due_unordered')};
DROP INDEX ${names.schemaPrefix}${indexName(names, 'app_unfinished')};
DROP INDEX ${names.schemaPrefix}${indexName(names, 'leases')};
DROP INDEX ${names.schemaPrefix}${indexName(names, 'by_state')};
-- Room on each page for the worker's in-place (HOT) updates of a row: new pages only; older rows keep theirs.
ALTER TABLE ${d} SET (fillfactor = 50);`;
}

/**
 * Migration 11. The update and delete trigger's statements take no variable: migration 10's delete
 * by an array variable was planned again on every call (a plan with a parameter stays custom), about
 * a tenth of the database's time in the default mode, where each done-mark is a statement of its
 * own. Now one statement per kind of change, planned once per session and kept: for an update, the
 * done rows leave and the others are upserted in the same statement (their ids never overlap).
 * `= ANY(ARRAY(...))`, not a join, and enable_seqscan off: the kept plan reads the queue's primary
 * key whatever the queue's size when it was made.
 */
export function queueSyncMigration(names: TableNames): string {
  const q = names.queue;
  return `CREATE OR REPLACE FUNCTION ${syncFunction(names)}() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $sync$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    ${syncUpdated(q)}
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM ${q} WHERE id = ANY(ARRAY(SELECT id FROM changed));
  ELSE
    TRUNCATE ${q};
  END IF;
  RETURN NULL;
END
$sync$;`;
}

const renumberFunction = (names: TableNames) => `${names.schemaPrefix}${quoteIdentifier(`${names.bare}_queue_renumber`)}`;

/**
 * Migration 12. A delivery whose id is changed by hand (`UPDATE ... SET id = DEFAULT`: the column
 * is an identity, so PostgreSQL allows it for a row no attempt points at) left its old id in the
 * queue: the update trigger copies the rows as they are after the statement and never sees the
 * id they had. That row matched no delivery, yet stayed due: a claim took it ahead of real work (a
 * worker claiming one row at a time found nothing, every time) and `drain()` waited for it. A row
 * trigger on a change of `id` alone removes the old id; `UPDATE OF id` keeps it off every other
 * update (PostgreSQL skips a column trigger whose column the statement does not set). Row
 * triggers fire before statement triggers, so the old id leaves before the new one is copied (a
 * review checked a rotation of ids in one statement). The migration removes the rows such updates
 * left: every queue row without a delivery that is not done (an old id may since belong to a done one).
 */
export function queueRenumberMigration(names: TableNames): string {
  const renumbered = renumberFunction(names);
  return `CREATE FUNCTION ${renumbered}() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $renumbered$
BEGIN
  DELETE FROM ${names.queue} WHERE id = OLD.id;
  RETURN NULL;
END
$renumbered$;
CREATE TRIGGER queue_on_renumber AFTER UPDATE OF id ON ${names.deliveries} FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION ${renumbered}();
DELETE FROM ${names.queue} AS x WHERE NOT EXISTS (SELECT FROM ${names.deliveries} d WHERE d.id = x.id AND d.state <> 'done');`;
}

/**
 * Migration 13. An attempt no longer points at its delivery through a foreign key: the batched
 * claim records one attempt per row it takes, and the key's check (a lookup and a lock of the
 * delivery row the same statement has just updated, once per attempt) was a fifth of the claim's
 * time in the database. Only the worker's claim inserts attempts, for the rows it updates in the
 * same statement; what the key's `ON DELETE CASCADE` did, the log's delete and truncate trigger now
 * does for any statement, the SDK's (retention, `delete`) or anyone's: a delivery's attempts go
 * with it, in the same statement; and what its refusal did, the renumber trigger does: a delivery
 * with attempts keeps its id (23503, as the key said). The key is found by what it joins, not by
 * its name (PostgreSQL cuts a long table's generated name).
 */
export function attemptsWithoutKeyMigration(names: TableNames): string {
  const q = names.queue;
  const a = names.attempts;
  // The log locked before its attempts, the order of every statement of the SDK: DROP CONSTRAINT
  // alone locks the attempts first, and deadlocked against a reader of the log then the attempts.
  return `LOCK TABLE ${names.deliveries}, ${a} IN ACCESS EXCLUSIVE MODE;
CREATE OR REPLACE FUNCTION ${renumberFunction(names)}() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $renumbered$
BEGIN
  IF EXISTS (SELECT FROM ${a} WHERE delivery_id = OLD.id) THEN
    RAISE EXCEPTION 'delivery % has attempts: its id cannot change', OLD.id USING ERRCODE = 'foreign_key_violation';
  END IF;
  DELETE FROM ${q} WHERE id = OLD.id;
  RETURN NULL;
END
$renumbered$;
DO $drop$
DECLARE
  key name;
BEGIN
  FOR key IN SELECT conname FROM pg_constraint
     WHERE contype = 'f' AND conrelid = '${a}'::regclass AND confrelid = '${names.deliveries}'::regclass LOOP
    EXECUTE format('ALTER TABLE ${a} DROP CONSTRAINT %I', key);
  END LOOP;
END
$drop$;
CREATE OR REPLACE FUNCTION ${syncFunction(names)}() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $sync$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    ${syncUpdated(q)}
  ELSIF TG_OP = 'DELETE' THEN
    WITH attempts AS (
      DELETE FROM ${a} WHERE delivery_id = ANY(ARRAY(SELECT id FROM changed))
    )
    DELETE FROM ${q} WHERE id = ANY(ARRAY(SELECT id FROM changed));
  ELSE
    -- A TRUNCATE that named the queue or the attempts as well has emptied them already, and truncating
    -- one again inside that statement is refused (the table is in use): only a table with pages left.
    -- By its size, not a query: a REPEATABLE READ snapshot can see no rows in a table that holds
    -- rows committed since, and TRUNCATE empties it whatever a snapshot sees.
    IF pg_relation_size('${q}') > 0 THEN
      TRUNCATE ${q};
    END IF;
    IF pg_relation_size('${a}') > 0 THEN
      TRUNCATE ${a};
    END IF;
  END IF;
  RETURN NULL;
END
$sync$;`;
}
