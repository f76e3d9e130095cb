import type { Driver } from '../../database/driver.js';
import { inboxError } from '../../database/errors.js';
import { watchTables, type TableNames } from '../schema/table-name.js';

/**
 * A lease row names the one watcher that evaluates and prunes. Taking it is one upsert that
 * succeeds only when the row is free, expired or already ours, so two watchers never both hold it,
 * on PostgreSQL as on PGlite, without holding a connection (as a session advisory lock would).
 * Times come from the watcher's clock, so a test clock drives expiry too.
 */
export class Lease {
  readonly #driver: Driver;
  readonly #names: TableNames;
  readonly #table: string;

  constructor(
    driver: Driver,
    names: TableNames,
    readonly holder: string,
    readonly durationMs: number,
    readonly name = 'watch',
  ) {
    this.#driver = driver;
    this.#names = names;
    this.#table = watchTables(names).leases;
  }

  /** Takes or renews the lease; resolves whether this watcher holds it until `now + durationMs`. */
  async take(now: Date): Promise<boolean> {
    try {
      const rows = await this.#driver.query(
        `INSERT INTO ${this.#table} AS l (name, holder, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
          WHERE l.holder = EXCLUDED.holder OR l.expires_at <= $4
         RETURNING holder`,
        [this.name, this.holder, new Date(now.getTime() + this.durationMs), now],
      );
      return rows.length === 1;
    } catch (error) {
      throw inboxError(error, this.#names.display, 'taking the watch lease');
    }
  }

  /** Gives the lease up, so that another watcher takes over at its next evaluation. */
  async release(): Promise<void> {
    await this.#driver.query(`DELETE FROM ${this.#table} WHERE name = $1 AND holder = $2`, [this.name, this.holder]);
  }
}
