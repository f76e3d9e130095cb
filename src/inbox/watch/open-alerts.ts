/**
 * The alerts open now: the incidents inbox.watch() keeps in `<table>_incidents`, read without a
 * running watcher (any process's watcher opened them), for `rack-webhooks inbox stats` and the
 * console's stats view. A schema from before the incidents table (version 6) has none to read.
 */
import { inboxError } from '../../database/errors.js';
import { readOpenIncidents } from '../operate/open-incidents.js';
import type { Query } from '../operate/query.js';
import type { TableNames } from '../schema/table-name.js';
import { incidentOf } from './incidents.js';

/** One open incident, as a person reads it: no fields, which may be long (delivery ids). */
export type OpenAlert = ReturnType<typeof incidentOf>;

/** The open incidents, critical first, then oldest first; `undefined` when the schema has no incidents table. */
export async function readOpenAlerts(query: Query, names: TableNames): Promise<OpenAlert[] | undefined> {
  try {
    const rows = await readOpenIncidents(
      query,
      names,
      'rule, key, severity, summary, since, opened_at',
      'true',
      "severity = 'critical' DESC, id",
    );
    return rows?.map(incidentOf);
  } catch (error) {
    throw inboxError(error, names.display, 'reading open alerts');
  }
}
