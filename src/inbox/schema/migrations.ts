import { attemptsWithoutKeyMigration, queueMigration, queueRenumberMigration, queueSyncMigration } from './queue-migrations.js';
import { reconciledMigration } from './reconciled-migration.js';
import { indexName, resolveTableNames, watchTables, type TableNames } from './table-name.js';

/**
 * The inbox schema as numbered migrations. `migrate()` applies the missing ones under an advisory
 * lock; `sql/inbox.sql` is the same text rendered for the default table name, for teams that run
 * their own migration tool (a test keeps the two equal). Never edit a shipped migration: add one.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: (names: TableNames) => string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'deliveries and attempts',
    sql: (names) => `CREATE TABLE ${names.deliveries} (
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
  CONSTRAINT ${indexName(names, 'state_check')} CHECK (state IN ('pending', 'running', 'done', 'dead', 'ignored')),
  CONSTRAINT ${indexName(names, 'replay_key')} UNIQUE (replay_key),
  CONSTRAINT ${indexName(names, 'event_key')} UNIQUE (event_key)
);
COMMENT ON COLUMN ${names.deliveries}.signed_at IS 'The signature header''s t (unix seconds)';
COMMENT ON COLUMN ${names.deliveries}.event_ns IS 'The event''s own timestamp in nanoseconds since the epoch (the time received when it is not RFC 3339)';
COMMENT ON COLUMN ${names.deliveries}.attempt_base IS 'attempts at the last retry or replay: attempts - attempt_base counts against maxAttempts';
COMMENT ON COLUMN ${names.deliveries}.run_at IS 'When a pending delivery is next due';
CREATE INDEX ${indexName(names, 'event_order')} ON ${names.deliveries} (event_ns, id);
-- The claim walks pending rows in event order and takes the due ones.
CREATE INDEX ${indexName(names, 'due')} ON ${names.deliveries} (event_ns, id) WHERE state = 'pending';
CREATE INDEX ${indexName(names, 'leases')} ON ${names.deliveries} (locked_until) WHERE state = 'running';
CREATE INDEX ${indexName(names, 'by_state')} ON ${names.deliveries} (state, event_ns, id);
CREATE INDEX ${indexName(names, 'by_action')} ON ${names.deliveries} (action, event_ns, id);
CREATE INDEX ${indexName(names, 'by_app')} ON ${names.deliveries} (app, event_ns, id) WHERE app IS NOT NULL;
CREATE INDEX ${indexName(names, 'received')} ON ${names.deliveries} (received_at);
CREATE TABLE ${names.attempts} (
  delivery_id   bigint      NOT NULL REFERENCES ${names.deliveries} (id) ON DELETE CASCADE,
  attempt       integer     NOT NULL,
  worker        text        NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz,
  outcome       text,
  error         text,
  PRIMARY KEY (delivery_id, attempt),
  CONSTRAINT ${indexName(names, 'attempt_outcome_check')} CHECK (outcome IN ('succeeded', 'failed', 'crashed', 'abandoned'))
);`,
  },
  {
    version: 2,
    name: 'same-event duplicates kept as rows',
    // A delivery with new bytes but the same event key is now stored (state 'duplicate', pointing
    // at the row it repeats) instead of being answered 'duplicate' with nothing kept; the body key
    // is the body's hash alone, whatever its t. Rows stored before keep their old key text.
    sql: (names) => `ALTER TABLE ${names.deliveries} RENAME COLUMN replay_key TO body_key;
ALTER TABLE ${names.deliveries} RENAME CONSTRAINT ${indexName(names, 'replay_key')} TO ${indexName(names, 'body_key')};
ALTER TABLE ${names.deliveries} ADD COLUMN duplicate_of bigint REFERENCES ${names.deliveries} (id) ON DELETE SET NULL;
ALTER TABLE ${names.deliveries} DROP CONSTRAINT ${indexName(names, 'state_check')};
ALTER TABLE ${names.deliveries} ADD CONSTRAINT ${indexName(names, 'state_check')}
  CHECK (state IN ('pending', 'running', 'done', 'dead', 'ignored', 'duplicate'));
COMMENT ON COLUMN ${names.deliveries}.body_key IS 'body:<sha256 of the body, base64url>: a copy with the same bytes is not stored again';
COMMENT ON COLUMN ${names.deliveries}.event_key IS 'event:<action>:<tick_id>:<sha256 of what the event says apart from time>; NULL on duplicate rows';
COMMENT ON COLUMN ${names.deliveries}.duplicate_of IS 'For state duplicate: the row this delivery repeats (the same event, other bytes)';
-- Deleting a row looks up the duplicates that point at it.
CREATE INDEX ${indexName(names, 'duplicates')} ON ${names.deliveries} (duplicate_of) WHERE duplicate_of IS NOT NULL;`,
  },
  {
    version: 3,
    name: 'unfinished deliveries by app',
    // A worker with order: 'per-app' asks, of each due delivery, whether its app has one running
    // or an earlier one unfinished: a few rows here, where by_app holds every row the app ever had.
    sql: (names) => `CREATE INDEX ${indexName(names, 'app_unfinished')} ON ${names.deliveries} (app, event_ns, id)
  WHERE state IN ('pending', 'running') AND app IS NOT NULL;`,
  },
  {
    version: 4,
    name: 'worker heartbeats and refusal counts',
    // Workers upsert their row every beat and delete it on stop(); a row whose last_seen_at is
    // older than 3 of its own beats is a worker that stopped without saying so. Refusals are
    // counted per minute and code in memory and added here in one upsert every few seconds per
    // process, so a flood of forged requests costs one small write, never one per request.
    sql: (names) => `CREATE TABLE ${names.workers} (
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
COMMENT ON COLUMN ${names.workers}.last_seen_at IS 'The last heartbeat (the database''s clock); older than 3 beats: the worker is gone';
COMMENT ON COLUMN ${names.workers}.beat_ms IS 'How often this worker beats, in ms';
COMMENT ON COLUMN ${names.workers}.mode IS 'The worker''s order option: none or per-app';
COMMENT ON COLUMN ${names.workers}.running IS 'Handlers running at the last heartbeat';
CREATE TABLE ${names.refusals} (
  minute        timestamptz NOT NULL,
  code          text        NOT NULL,
  count         bigint      NOT NULL,
  PRIMARY KEY (minute, code)
);
COMMENT ON TABLE ${names.refusals} IS 'Deliveries the receiver refused, per minute (truncated) and refusal code; never a body or a header value';`,
  },
  {
    version: 5,
    name: 'trace context of the receiving span',
    // The worker's OpenTelemetry `process` span links to the span that received the delivery.
    sql: (names) => `ALTER TABLE ${names.deliveries} ADD COLUMN trace_context text;
COMMENT ON COLUMN ${names.deliveries}.trace_context IS 'The W3C traceparent of the span that received the delivery (OpenTelemetry), NULL when none was active';`,
  },
  {
    version: 6,
    name: 'alert incidents and leases',
    // The watcher's incidents survive its restart: one open row per incident key (a partial unique
    // index, so two evaluators can never open one twice), with whether its open and resolve alerts
    // were handed to onAlert (at least once across a crash). A lease row names the one process that
    // evaluates alerts and prunes at a time; it expires, so another takes over from a dead one.
    sql: (names) => `CREATE TABLE ${watchTables(names).incidents} (
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
COMMENT ON COLUMN ${watchTables(names).incidents}.fields IS 'The alert''s structured fields as JSON text (counts, ids, codes); never a body, a header value or a secret';
COMMENT ON COLUMN ${watchTables(names).incidents}.open_sent IS 'onAlert accepted the open alert; false after a crash: sent again';
CREATE UNIQUE INDEX ${indexName(names, 'incidents_open')} ON ${watchTables(names).incidents} (key) WHERE resolved_at IS NULL;
CREATE TABLE ${watchTables(names).leases} (
  name          text        PRIMARY KEY,
  holder        text        NOT NULL,
  expires_at    timestamptz NOT NULL
);`,
  },
  {
    version: 7,
    name: 'failure class and stack, attempts by start time',
    // Numbered after the migrations other branches add (4 to 7); the numbers only need to grow.
    // The class and a bounded stack say where a handler failed; the index serves the hourly history.
    sql: (names) => `ALTER TABLE ${names.attempts} ADD COLUMN error_class text;
ALTER TABLE ${names.attempts} ADD COLUMN error_stack text;
COMMENT ON COLUMN ${names.attempts}.error_class IS 'The thrown error''s class name (TypeError, PagerError), as the handler threw it';
COMMENT ON COLUMN ${names.attempts}.error_stack IS 'The thrown error''s stack, bounded to 4 KiB';
CREATE INDEX ${indexName(names, 'attempts_started')} ON ${names.attempts} (started_at);`,
  },
  {
    version: 8,
    name: 'due deliveries without an app',
    // A worker with order: 'per-app' takes deliveries without an app in event order, unordered,
    // next to each app's first: by their own index, where due would read every app's backlog first.
    sql: (names) => `CREATE INDEX ${indexName(names, 'due_unordered')} ON ${names.deliveries} (event_ns, id)
  WHERE state = 'pending' AND app IS NULL;`,
  },
  {
    version: 9,
    name: 'fewer index entries per state change',
    // A state change rewrites the row and adds it to every index whose predicate it meets; a worker
    // makes two per delivery (running, done). by_state now holds only the rare states: pending rows
    // have due, running ones leases, and done ones are most of the table (event_order serves them).
    // Attempts pages keep 60% free: an outcome makes the row about a third longer, and written on the
    // same page it is a HOT update (no index entries).
    sql: (names) => `DROP INDEX ${names.schemaPrefix}${indexName(names, 'by_state')};
CREATE INDEX ${indexName(names, 'by_state')} ON ${names.deliveries} (state, event_ns, id) WHERE state NOT IN ('pending', 'running', 'done');
ALTER TABLE ${names.attempts} SET (fillfactor = 40);`,
  },
  {
    version: 10,
    name: 'a narrow queue beside the log',
    sql: queueMigration,
  },
  {
    version: 11,
    name: 'queue triggers planned once',
    sql: queueSyncMigration,
  },
  {
    version: 12,
    name: 'a renumbered delivery leaves the queue',
    sql: queueRenumberMigration,
  },
  {
    version: 13,
    name: 'attempts deleted with their delivery by trigger',
    sql: attemptsWithoutKeyMigration,
  },
  {
    version: 14,
    name: 'reconciled deliveries',
    sql: reconciledMigration,
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export function migrationsTableSql(names: TableNames): string {
  return `CREATE TABLE IF NOT EXISTS ${names.migrations} (
  version     integer     PRIMARY KEY,
  name        text        NOT NULL,
  applied_at  timestamptz NOT NULL DEFAULT now()
)`;
}

/**
 * The schema script for a table name (default `rack_webhooks_inbox`), for your own migration tool:
 * the whole schema as one script, as `sql/inbox.sql` ships it.
 */
export function schemaSql(table?: string): string {
  const names = resolveTableNames(table);
  return [
    `-- rack-webhooks inbox schema, version ${LATEST_VERSION}. Generated from src/inbox/schema/migrations.ts: do not edit.`,
    '-- For teams that run their own migration tool. inbox.migrate() applies the same migrations',
    '-- itself (under an advisory lock) and records them in the migrations table below.',
    'BEGIN;',
    `${migrationsTableSql(names)};`,
    ...MIGRATIONS.flatMap(({ version, name, sql }) => [
      `-- ${version}: ${name}`,
      sql(names),
      `INSERT INTO ${names.migrations} (version, name) VALUES (${version}, '${name}');`,
    ]),
    'COMMIT;',
    '',
  ].join('\n');
}
