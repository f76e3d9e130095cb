import type { Driver } from './driver.js';
import { isPGliteDirectory } from './owner/open.js';
import { isPgClient, isPgPool, pgClientDriver, pgPoolDriver } from './pg.js';
import { isPGlite, pgliteDriver } from './pglite.js';
import { isPostgresJs, postgresJsDriver } from './postgres-js.js';

/** Which client the user handed over, by shape: none of the three is imported by the package. */
export function driverFor(database: unknown, prepare = true): Driver {
  if (isPGliteDirectory(database)) return directoryDriver(database.client);
  if (isPostgresJs(database)) return postgresJsDriver(database, prepare);
  if (isPGlite(database)) return pgliteDriver(database);
  if (isPgPool(database)) return pgPoolDriver(database, prepare);
  if (isPgClient(database)) return pgClientDriver(database, prepare);
  throw new TypeError(
    'createInbox: database must be a pg Pool or Client, a postgres.js sql instance, a PGlite instance, or openPGlite(dir)' +
      (database === null || typeof database !== 'object' ? `, got ${database === null ? 'null' : typeof database}` : ''),
  );
}

/**
 * openPGlite(dir): the owner's PGlite, or a guest's pg Pool on the owner's socket. A guest sends no
 * named statements (the owner's one session is shared by every guest) and does not LISTEN (the
 * owner refuses it): its workers poll, and what it stores still wakes the owner's at once.
 * Told apart by the client, not by `role`: a guest that has taken the directory over reads 'owner'
 * while its client stays the pool (an app started beside a CLI run that ended failed its migrate
 * with "db.transaction is not a function").
 */
function directoryDriver(client: unknown): Driver {
  if (isPGlite(client)) return pgliteDriver(client, { owned: true });
  const driver = pgPoolDriver(client as Parameters<typeof pgPoolDriver>[0], false);
  return { ...driver, listen: async () => async () => {}, sizedBy: 'openPGlite(dir, { poolSize })' };
}
