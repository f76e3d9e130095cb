-- rack-webhooks inbox schema, version 14. Generated from src/inbox/schema/migrations.ts: do not edit.
-- For teams that run their own migration tool. inbox.migrate() applies the same migrations
-- itself (under an advisory lock) and records them in the migrations table below.
BEGIN;
CREATE TABLE IF NOT EXISTS "rack_webhooks_inbox_migrations" (
  version     integer     PRIMARY KEY,
  name        text        NOT NULL,
  applied_at  timestamptz NOT NULL DEFAULT now()
);
-- 1: deliveries and attempts
CREATE TABLE "rack_webhooks_inbox" (
  id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  received_at   timestamptz NOT NULL DEFAULT now(),
  -- The delivery exactly as received and verified.
  body          bytea       NOT NULL,
  signature     text        NOT NULL,
  signed_at     bigint      NOT NULL,
  secret_index  integer     NOT NULL,
  -- What the event says, for filters and ordering.
  action        text        NOT NULL,
  event_time    text        NOT NULL,
  event_ns      bigint      NOT NULL,
  app           text,
  tick_id       text,
  -- The receiver's two dedup keys: the insert is the claim.
  replay_key    text        NOT NULL,
  event_key     text,
  -- Processing.
  state         text        NOT NULL,
  attempts      integer     NOT NULL DEFAULT 0,
  attempt_base  integer     NOT NULL DEFAULT 0,
  run_at        timestamptz,
  locked_until  timestamptz,
  locked_by     text,
  last_error    text,
  done_at       timestamptz,
  replayed_at   timestamptz,
  CONSTRAINT "rack_webhooks_inbox_state_check" CHECK (state IN ('pending', 'running', 'done', 'dead', 'ignored')),
  CONSTRAINT "rack_webhooks_inbox_replay_key" UNIQUE (replay_key),
  CONSTRAINT "rack_webhooks_inbox_event_key" UNIQUE (event_key)
);
COMMENT ON COLUMN "rack_webhooks_inbox".signed_at IS 'The signature header''s t (unix seconds)';
COMMENT ON COLUMN "rack_webhooks_inbox".event_ns IS 'The event''s own timestamp in nanoseconds since the epoch (the time received when it is not RFC 3339)';
COMMENT ON COLUMN "rack_webhooks_inbox".attempt_base IS 'attempts at the last retry or replay: attempts - attempt_base counts against maxAttempts';
COMMENT ON COLUMN "rack_webhooks_inbox".run_at IS 'When a pending delivery is next due';
CREATE INDEX "rack_webhooks_inbox_event_order" ON "rack_webhooks_inbox" (event_ns, id);
-- The claim walks pending rows in event order and takes the due ones.
CREATE INDEX "rack_webhooks_inbox_due" ON "rack_webhooks_inbox" (event_ns, id) WHERE state = 'pending';
CREATE INDEX "rack_webhooks_inbox_leases" ON "rack_webhooks_inbox" (locked_until) WHERE state = 'running';
CREATE INDEX "rack_webhooks_inbox_by_state" ON "rack_webhooks_inbox" (state, event_ns, id);
CREATE INDEX "rack_webhooks_inbox_by_action" ON "rack_webhooks_inbox" (action, event_ns, id);
CREATE INDEX "rack_webhooks_inbox_by_app" ON "rack_webhooks_inbox" (app, event_ns, id) WHERE app IS NOT NULL;
CREATE INDEX "rack_webhooks_inbox_received" ON "rack_webhooks_inbox" (received_at);
CREATE TABLE "rack_webhooks_inbox_attempts" (
  delivery_id   bigint      NOT NULL REFERENCES "rack_webhooks_inbox" (id) ON DELETE CASCADE,
  attempt       integer     NOT NULL,
  worker        text        NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz,
  outcome       text,
  error         text,
  PRIMARY KEY (delivery_id, attempt),
  CONSTRAINT "rack_webhooks_inbox_attempt_outcome_check" CHECK (outcome IN ('succeeded', 'failed', 'crashed', 'abandoned'))
);
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (1, 'deliveries and attempts');
-- 2: same-event duplicates kept as rows
ALTER TABLE "rack_webhooks_inbox" RENAME COLUMN replay_key TO body_key;
ALTER TABLE "rack_webhooks_inbox" RENAME CONSTRAINT "rack_webhooks_inbox_replay_key" TO "rack_webhooks_inbox_body_key";
ALTER TABLE "rack_webhooks_inbox" ADD COLUMN duplicate_of bigint REFERENCES "rack_webhooks_inbox" (id) ON DELETE SET NULL;
ALTER TABLE "rack_webhooks_inbox" DROP CONSTRAINT "rack_webhooks_inbox_state_check";
ALTER TABLE "rack_webhooks_inbox" ADD CONSTRAINT "rack_webhooks_inbox_state_check"
  CHECK (state IN ('pending', 'running', 'done', 'dead', 'ignored', 'duplicate'));
COMMENT ON COLUMN "rack_webhooks_inbox".body_key IS 'body:<sha256 of the body, base64url>: a copy with the same bytes is not stored again';
COMMENT ON COLUMN "rack_webhooks_inbox".event_key IS 'event:<action>:<tick_id>:<sha256 of what the event says apart from time>; NULL on duplicate rows';
COMMENT ON COLUMN "rack_webhooks_inbox".duplicate_of IS 'For state duplicate: the row this delivery repeats (the same event, other bytes)';
-- Deleting a row looks up the duplicates that point at it.
CREATE INDEX "rack_webhooks_inbox_duplicates" ON "rack_webhooks_inbox" (duplicate_of) WHERE duplicate_of IS NOT NULL;
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (2, 'same-event duplicates kept as rows');
-- 3: unfinished deliveries by app
CREATE INDEX "rack_webhooks_inbox_app_unfinished" ON "rack_webhooks_inbox" (app, event_ns, id)
  WHERE state IN ('pending', 'running') AND app IS NOT NULL;
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (3, 'unfinished deliveries by app');
-- 4: worker heartbeats and refusal counts
CREATE TABLE "rack_webhooks_inbox_workers" (
  id            text        PRIMARY KEY,
  host          text        NOT NULL,
  pid           integer     NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  beat_ms       integer     NOT NULL,
  concurrency   integer     NOT NULL,
  mode          text        NOT NULL,
  running       integer     NOT NULL DEFAULT 0
);
COMMENT ON COLUMN "rack_webhooks_inbox_workers".last_seen_at IS 'The last heartbeat (the database''s clock); older than 3 beats: the worker is gone';
COMMENT ON COLUMN "rack_webhooks_inbox_workers".beat_ms IS 'How often this worker beats, in ms';
COMMENT ON COLUMN "rack_webhooks_inbox_workers".mode IS 'The worker''s order option: none or per-app';
COMMENT ON COLUMN "rack_webhooks_inbox_workers".running IS 'Handlers running at the last heartbeat';
CREATE TABLE "rack_webhooks_inbox_refusals" (
  minute        timestamptz NOT NULL,
  code          text        NOT NULL,
  count         bigint      NOT NULL,
  PRIMARY KEY (minute, code)
);
COMMENT ON TABLE "rack_webhooks_inbox_refusals" IS 'Deliveries the receiver refused, per minute (truncated) and refusal code; never a body or a header value';
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (4, 'worker heartbeats and refusal counts');
-- 5: trace context of the receiving span
ALTER TABLE "rack_webhooks_inbox" ADD COLUMN trace_context text;
COMMENT ON COLUMN "rack_webhooks_inbox".trace_context IS 'The W3C traceparent of the span that received the delivery (OpenTelemetry), NULL when none was active';
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (5, 'trace context of the receiving span');
-- 6: alert incidents and leases
CREATE TABLE "rack_webhooks_inbox_incidents" (
  id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  rule          text        NOT NULL,
  key           text        NOT NULL,
  severity      text        NOT NULL,
  since         timestamptz NOT NULL,
  opened_at     timestamptz NOT NULL,
  resolved_at   timestamptz,
  summary       text        NOT NULL,
  fields        text        NOT NULL,
  open_sent     boolean     NOT NULL DEFAULT false,
  resolve_sent  boolean     NOT NULL DEFAULT false
);
COMMENT ON COLUMN "rack_webhooks_inbox_incidents".fields IS 'The alert''s structured fields as JSON text (counts, ids, codes); never a body, a header value or a secret';
COMMENT ON COLUMN "rack_webhooks_inbox_incidents".open_sent IS 'onAlert accepted the open alert; false after a crash: sent again';
CREATE UNIQUE INDEX "rack_webhooks_inbox_incidents_open" ON "rack_webhooks_inbox_incidents" (key) WHERE resolved_at IS NULL;
CREATE TABLE "rack_webhooks_inbox_watch_lease" (
  name          text        PRIMARY KEY,
  holder        text        NOT NULL,
  expires_at    timestamptz NOT NULL
);
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (6, 'alert incidents and leases');
-- 7: failure class and stack, attempts by start time
ALTER TABLE "rack_webhooks_inbox_attempts" ADD COLUMN error_class text;
ALTER TABLE "rack_webhooks_inbox_attempts" ADD COLUMN error_stack text;
COMMENT ON COLUMN "rack_webhooks_inbox_attempts".error_class IS 'The thrown error''s class name (TypeError, PagerError), as the handler threw it';
COMMENT ON COLUMN "rack_webhooks_inbox_attempts".error_stack IS 'The thrown error''s stack, bounded to 4 KiB';
CREATE INDEX "rack_webhooks_inbox_attempts_started" ON "rack_webhooks_inbox_attempts" (started_at);
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (7, 'failure class and stack, attempts by start time');
-- 8: due deliveries without an app
CREATE INDEX "rack_webhooks_inbox_due_unordered" ON "rack_webhooks_inbox" (event_ns, id)
  WHERE state = 'pending' AND app IS NULL;
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (8, 'due deliveries without an app');
-- 9: fewer index entries per state change
DROP INDEX "rack_webhooks_inbox_by_state";
CREATE INDEX "rack_webhooks_inbox_by_state" ON "rack_webhooks_inbox" (state, event_ns, id) WHERE state NOT IN ('pending', 'running', 'done');
ALTER TABLE "rack_webhooks_inbox_attempts" SET (fillfactor = 40);
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (9, 'fewer index entries per state change');
-- 10: a narrow queue beside the log
CREATE TABLE "rack_webhooks_inbox_queue" (
  id            bigint      PRIMARY KEY,
  state         text        NOT NULL,
  event_ns      bigint      NOT NULL,
  app           text,
  run_at        timestamptz,
  locked_until  timestamptz
);
COMMENT ON COLUMN "rack_webhooks_inbox_queue".run_at IS 'When a pending delivery is due; NULL in every other state (the log''s run_at keeps its last value)';
COMMENT ON TABLE "rack_webhooks_inbox_queue" IS 'One row per delivery that is not done, copied from the log by its triggers: what the worker claims and what reads by state find';
-- The claim walks pending rows in event order and takes the due ones. It asks run_at <= now()
-- alone, which only pending rows can meet: before the table is first analyzed (a burst after an
-- empty queue), the planner's default guess for state = 'pending' is 1 row in 200, and with it
-- the claim sorted every pending row each time instead of reading this index in order.
CREATE INDEX "rack_webhooks_inbox_queue_due" ON "rack_webhooks_inbox_queue" (event_ns, id) WHERE run_at IS NOT NULL;
CREATE INDEX "rack_webhooks_inbox_queue_noapp" ON "rack_webhooks_inbox_queue" (event_ns, id) WHERE state = 'pending' AND app IS NULL;
CREATE INDEX "rack_webhooks_inbox_queue_app" ON "rack_webhooks_inbox_queue" (app, event_ns, id) WHERE state IN ('pending', 'running') AND app IS NOT NULL;
CREATE INDEX "rack_webhooks_inbox_queue_lease" ON "rack_webhooks_inbox_queue" (locked_until) WHERE state = 'running';
-- Dead, ignored and duplicate rows by state: pending and running ones have their own indexes above,
-- and one entry fewer per claim.
CREATE INDEX "rack_webhooks_inbox_queue_state" ON "rack_webhooks_inbox_queue" (state, event_ns, id) WHERE state NOT IN ('pending', 'running');
-- A stored delivery: one row, one INSERT (a row trigger: a third cheaper than a statement trigger
-- with its changed rows, on the receiver's one-row inserts).
CREATE FUNCTION "rack_webhooks_inbox_queue_insert"() RETURNS trigger LANGUAGE plpgsql AS $queued$
BEGIN
  INSERT INTO "rack_webhooks_inbox_queue" (id, state, event_ns, app, run_at, locked_until) VALUES (NEW.id, NEW.state, NEW.event_ns, NEW.app, CASE WHEN NEW.state = 'pending' THEN NEW.run_at END, NEW.locked_until);
  RETURN NULL;
END
$queued$;
-- Updates and deletes: once per statement, whatever its row count (the batched worker's 400 rows).
-- enable_seqscan off: the delete by ids reads the primary key whatever the queue's size when the
-- plan was made; a plan kept from when the queue was small scanned it whole, once per delivery
-- done, after it had grown (seen: the default mode at half its speed). Its other statements read
-- only the changed rows, or the primary key through ON CONFLICT.
CREATE FUNCTION "rack_webhooks_inbox_queue_sync"() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $sync$
DECLARE
  finished bigint[];
  changed_count bigint;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    TRUNCATE "rack_webhooks_inbox_queue";
    RETURN NULL;
  END IF;
  SELECT array_agg(id) FILTER (WHERE TG_OP = 'DELETE' OR state = 'done'), count(*) INTO finished, changed_count FROM changed;
  IF finished IS NOT NULL THEN
    DELETE FROM "rack_webhooks_inbox_queue" WHERE id = ANY(finished);
  END IF;
  -- Only when some changed row is not done (a delivery marked done needs no upsert).
  IF TG_OP = 'UPDATE' AND changed_count > coalesce(cardinality(finished), 0) THEN
    INSERT INTO "rack_webhooks_inbox_queue" AS x (id, state, event_ns, app, run_at, locked_until)
    SELECT id, state, event_ns, app, CASE WHEN state = 'pending' THEN run_at END, locked_until FROM changed WHERE state <> 'done'
    ON CONFLICT (id) DO UPDATE SET state = excluded.state, event_ns = excluded.event_ns, app = excluded.app,
           run_at = excluded.run_at, locked_until = excluded.locked_until
     WHERE (x.state, x.event_ns, x.app, x.run_at, x.locked_until)
           IS DISTINCT FROM (excluded.state, excluded.event_ns, excluded.app, excluded.run_at, excluded.locked_until);
  END IF;
  RETURN NULL;
END
$sync$;
CREATE TRIGGER queue_on_insert AFTER INSERT ON "rack_webhooks_inbox" FOR EACH ROW WHEN (NEW.state <> 'done') EXECUTE FUNCTION "rack_webhooks_inbox_queue_insert"();
CREATE TRIGGER queue_on_update AFTER UPDATE ON "rack_webhooks_inbox" REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION "rack_webhooks_inbox_queue_sync"();
CREATE TRIGGER queue_on_delete AFTER DELETE ON "rack_webhooks_inbox" REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION "rack_webhooks_inbox_queue_sync"();
CREATE TRIGGER queue_on_truncate AFTER TRUNCATE ON "rack_webhooks_inbox" FOR EACH STATEMENT EXECUTE FUNCTION "rack_webhooks_inbox_queue_sync"();
INSERT INTO "rack_webhooks_inbox_queue" (id, state, event_ns, app, run_at, locked_until) SELECT id, state, event_ns, app, CASE WHEN state = 'pending' THEN run_at END, locked_until FROM "rack_webhooks_inbox" WHERE state <> 'done';
DROP INDEX "rack_webhooks_inbox_due";
DROP INDEX "rack_webhooks_inbox_due_unordered";
DROP INDEX "rack_webhooks_inbox_app_unfinished";
DROP INDEX "rack_webhooks_inbox_leases";
DROP INDEX "rack_webhooks_inbox_by_state";
-- Room on each page for the worker's in-place (HOT) updates of a row: new pages only; older rows keep theirs.
ALTER TABLE "rack_webhooks_inbox" SET (fillfactor = 50);
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (10, 'a narrow queue beside the log');
-- 11: queue triggers planned once
CREATE OR REPLACE FUNCTION "rack_webhooks_inbox_queue_sync"() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $sync$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    WITH finished AS (
      DELETE FROM "rack_webhooks_inbox_queue" WHERE id = ANY(ARRAY(SELECT id FROM changed WHERE state = 'done'))
    )
    INSERT INTO "rack_webhooks_inbox_queue" AS x (id, state, event_ns, app, run_at, locked_until)
    SELECT id, state, event_ns, app, CASE WHEN state = 'pending' THEN run_at END, locked_until FROM changed WHERE state <> 'done'
    ON CONFLICT (id) DO UPDATE SET state = excluded.state, event_ns = excluded.event_ns, app = excluded.app,
           run_at = excluded.run_at, locked_until = excluded.locked_until
     WHERE (x.state, x.event_ns, x.app, x.run_at, x.locked_until)
           IS DISTINCT FROM (excluded.state, excluded.event_ns, excluded.app, excluded.run_at, excluded.locked_until);
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM "rack_webhooks_inbox_queue" WHERE id = ANY(ARRAY(SELECT id FROM changed));
  ELSE
    TRUNCATE "rack_webhooks_inbox_queue";
  END IF;
  RETURN NULL;
END
$sync$;
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (11, 'queue triggers planned once');
-- 12: a renumbered delivery leaves the queue
CREATE FUNCTION "rack_webhooks_inbox_queue_renumber"() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $renumbered$
BEGIN
  DELETE FROM "rack_webhooks_inbox_queue" WHERE id = OLD.id;
  RETURN NULL;
END
$renumbered$;
CREATE TRIGGER queue_on_renumber AFTER UPDATE OF id ON "rack_webhooks_inbox" FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION "rack_webhooks_inbox_queue_renumber"();
DELETE FROM "rack_webhooks_inbox_queue" AS x WHERE NOT EXISTS (SELECT FROM "rack_webhooks_inbox" d WHERE d.id = x.id AND d.state <> 'done');
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (12, 'a renumbered delivery leaves the queue');
-- 13: attempts deleted with their delivery by trigger
LOCK TABLE "rack_webhooks_inbox", "rack_webhooks_inbox_attempts" IN ACCESS EXCLUSIVE MODE;
CREATE OR REPLACE FUNCTION "rack_webhooks_inbox_queue_renumber"() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $renumbered$
BEGIN
  IF EXISTS (SELECT FROM "rack_webhooks_inbox_attempts" WHERE delivery_id = OLD.id) THEN
    RAISE EXCEPTION 'delivery % has attempts: its id cannot change', OLD.id USING ERRCODE = 'foreign_key_violation';
  END IF;
  DELETE FROM "rack_webhooks_inbox_queue" WHERE id = OLD.id;
  RETURN NULL;
END
$renumbered$;
DO $drop$
DECLARE
  key name;
BEGIN
  FOR key IN SELECT conname FROM pg_constraint
     WHERE contype = 'f' AND conrelid = '"rack_webhooks_inbox_attempts"'::regclass AND confrelid = '"rack_webhooks_inbox"'::regclass LOOP
    EXECUTE format('ALTER TABLE "rack_webhooks_inbox_attempts" DROP CONSTRAINT %I', key);
  END LOOP;
END
$drop$;
CREATE OR REPLACE FUNCTION "rack_webhooks_inbox_queue_sync"() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $sync$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    WITH finished AS (
      DELETE FROM "rack_webhooks_inbox_queue" WHERE id = ANY(ARRAY(SELECT id FROM changed WHERE state = 'done'))
    )
    INSERT INTO "rack_webhooks_inbox_queue" AS x (id, state, event_ns, app, run_at, locked_until)
    SELECT id, state, event_ns, app, CASE WHEN state = 'pending' THEN run_at END, locked_until FROM changed WHERE state <> 'done'
    ON CONFLICT (id) DO UPDATE SET state = excluded.state, event_ns = excluded.event_ns, app = excluded.app,
           run_at = excluded.run_at, locked_until = excluded.locked_until
     WHERE (x.state, x.event_ns, x.app, x.run_at, x.locked_until)
           IS DISTINCT FROM (excluded.state, excluded.event_ns, excluded.app, excluded.run_at, excluded.locked_until);
  ELSIF TG_OP = 'DELETE' THEN
    WITH attempts AS (
      DELETE FROM "rack_webhooks_inbox_attempts" WHERE delivery_id = ANY(ARRAY(SELECT id FROM changed))
    )
    DELETE FROM "rack_webhooks_inbox_queue" WHERE id = ANY(ARRAY(SELECT id FROM changed));
  ELSE
    -- A TRUNCATE that named the queue or the attempts as well has emptied them already, and truncating
    -- one again inside that statement is refused (the table is in use): only a table with pages left.
    -- By its size, not a query: a REPEATABLE READ snapshot can see no rows in a table that holds
    -- rows committed since, and TRUNCATE empties it whatever a snapshot sees.
    IF pg_relation_size('"rack_webhooks_inbox_queue"') > 0 THEN
      TRUNCATE "rack_webhooks_inbox_queue";
    END IF;
    IF pg_relation_size('"rack_webhooks_inbox_attempts"') > 0 THEN
      TRUNCATE "rack_webhooks_inbox_attempts";
    END IF;
  END IF;
  RETURN NULL;
END
$sync$;
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (13, 'attempts deleted with their delivery by trigger');
-- 14: reconciled deliveries
ALTER TABLE "rack_webhooks_inbox" ADD COLUMN origin text NOT NULL DEFAULT 'received';
ALTER TABLE "rack_webhooks_inbox" ADD CONSTRAINT "rack_webhooks_inbox_origin_check" CHECK (origin IN ('received', 'reconciled'));
ALTER TABLE "rack_webhooks_inbox" ADD COLUMN evidence jsonb;
ALTER TABLE "rack_webhooks_inbox" ADD COLUMN natural_key text;
COMMENT ON COLUMN "rack_webhooks_inbox".origin IS 'received: a signed delivery as the rack sent it; reconciled: rebuilt from the rack''s API by inbox reconcile --record (unsigned)';
COMMENT ON COLUMN "rack_webhooks_inbox".evidence IS 'For reconciled rows: the API route, field, value and time that prove the rack sent the event; NULL for received rows';
COMMENT ON COLUMN "rack_webhooks_inbox".natural_key IS 'The event''s natural key (action, app, id or tick_id and its time) when it has one: a late real arrival of a reconciled event is its duplicate';
CREATE INDEX "rack_webhooks_inbox_natural_key" ON "rack_webhooks_inbox" (natural_key) WHERE natural_key IS NOT NULL;
CREATE UNIQUE INDEX "rack_webhooks_inbox_reconciled_key" ON "rack_webhooks_inbox" (natural_key) WHERE origin = 'reconciled';
INSERT INTO "rack_webhooks_inbox_migrations" (version, name) VALUES (14, 'reconciled deliveries');
COMMIT;
