import { indexName, type TableNames } from './table-name.js';

/**
 * Migration 14. `inbox reconcile --record` stores each event the rack's API proves was sent and
 * the inbox lacks as a reconstructed delivery: `origin = 'reconciled'`, no signature, the gap's
 * evidence kept beside it. `natural_key` is the event's key that a reconstruction and the real
 * delivery agree on (src/inbox/natural-key.ts); it is set on every row whose event has one, so a
 * late real arrival finds the reconstructed row (and is stored as its duplicate), and recording
 * finds a real one. Unique among reconciled rows only: two distinct real events may share it (a
 * forged `POST /events`, say) and both are kept. Rows stored before this version have no key.
 */
export function reconciledMigration(names: TableNames): string {
  const d = names.deliveries;
  return `ALTER TABLE ${d} ADD COLUMN origin text NOT NULL DEFAULT 'received';
ALTER TABLE ${d} ADD CONSTRAINT ${indexName(names, 'origin_check')} CHECK (origin IN ('received', 'reconciled'));
ALTER TABLE ${d} ADD COLUMN evidence jsonb;
ALTER TABLE ${d} ADD COLUMN natural_key text;
COMMENT ON COLUMN ${d}.origin IS 'received: a signed delivery as the rack sent it; reconciled: rebuilt from the rack''s API by inbox reconcile --record (unsigned)';
COMMENT ON COLUMN ${d}.evidence IS 'For reconciled rows: the API route, field, value and time that prove the rack sent the event; NULL for received rows';
COMMENT ON COLUMN ${d}.natural_key IS 'The event''s natural key (action, app, id or tick_id and its time) when it has one: a late real arrival of a reconciled event is its duplicate';
CREATE INDEX ${indexName(names, 'natural_key')} ON ${d} (natural_key) WHERE natural_key IS NOT NULL;
CREATE UNIQUE INDEX ${indexName(names, 'reconciled_key')} ON ${d} (natural_key) WHERE origin = 'reconciled';`;
}
