import type { Driver } from './driver.js';
import { isPgClient, isPgPool, pgClientDriver, pgPoolDriver } from './pg.js';
import { isPGlite, pgliteDriver } from './pglite.js';
import { isPostgresJs, postgresJsDriver } from './postgres-js.js';

/** Which client the user handed over, by shape: none of the three is imported by the package. */
export function driverFor(database: unknown, prepare = true): Driver {
  if (isPostgresJs(database)) return postgresJsDriver(database, prepare);
  if (isPGlite(database)) return pgliteDriver(database);
  if (isPgPool(database)) return pgPoolDriver(database, prepare);
  if (isPgClient(database)) return pgClientDriver(database, prepare);
  throw new TypeError(
    'createInbox: database must be a pg Pool or Client, a postgres.js sql instance, or a PGlite instance' +
      (database === null || typeof database !== 'object' ? `, got ${database === null ? 'null' : typeof database}` : ''),
  );
}
