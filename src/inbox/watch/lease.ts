import { watchTables, type TableNames } from '../schema/table-name.js';
import type { GuardedQuery } from './incidents.js';

/**
 * A lease row names the one watcher that evaluates and prunes. Taking it is one upsert that
 * succeeds only when the row is free, expired or already ours, so two watchers never both hold it,
 * on PostgreSQL as on PGlite, without holding a connection (as a session advisory lock would).
 * Times come from the watcher's clock, so a test clock drives expiry too.
 */
export function watchLease(query: GuardedQuery, names: TableNames, holder: string, durationMs: number) {
  const table = watchTables(names).leases;
  return {
    /** Takes or renews the lease; resolves whether this watcher holds it until `now + durationMs`. */
    async take(now: Date): Promise<boolean> {
      const rows = await query(
        `INSERT INTO ${table} AS l (name, holder, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
          WHERE l.holder = EXCLUDED.holder OR l.expires_at <= $4
         RETURNING holder`,
        ['watch', holder, new Date(now.getTime() + durationMs), now],
        'taking the watch lease',
      );
      return rows.length === 1;
    },
    /** Gives the lease up, so that another watcher takes over at its next evaluation. */
    async release(): Promise<void> {
      await query(`DELETE FROM ${table} WHERE name = $1 AND holder = $2`, ['watch', holder], 'giving the watch lease up');
    },
  };
}
