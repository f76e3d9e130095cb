/**
 * Following holds one connection for its whole run: out of a pg Pool, one client checked out and
 * kept (its statements and its LISTEN on the same connection); PGlite is one connection already.
 */
import { driverFor } from '../../database/detect.js';
import type { Queryable } from '../../database/driver.js';
import { checkIn, checkOut, type PgClientOnlyLike } from '../../database/pg-client.js';
import { isPgPool, pgClientDriver } from '../../database/pg.js';
import type { FollowSource } from './follow.js';

export interface HeldConnection {
  readonly source: FollowSource;
  /** Gives the connection back; calling it again is harmless. */
  release(): void;
}

/**
 * `query` serves a client of no known shape (a PGlite directory reached through the process that
 * owns it): statements only, so following polls.
 */
export async function holdOneConnection(client: unknown, query: Queryable['query']): Promise<HeldConnection> {
  if (!isPgPool(client)) {
    let source: FollowSource;
    try {
      source = driverFor(client, false);
    } catch {
      source = { query };
    }
    return { source, release: () => {} };
  }
  const held = await checkOut(client);
  let released = false;
  return {
    // Unnamed statements: nothing is left prepared on a connection the pool may hand on.
    source: pgClientDriver(held as unknown as PgClientOnlyLike, false),
    release() {
      if (released) return;
      released = true;
      checkIn(held, false);
    },
  };
}
