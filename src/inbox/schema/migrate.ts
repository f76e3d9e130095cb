import type { Driver } from '../../database/driver.js';
import { WebhookInboxError, inboxError } from '../../database/errors.js';
import { pause, systemClock, type Clock } from '../clock.js';
import type { MigrateResult } from '../types.js';
import { LATEST_VERSION, MIGRATIONS, migrationsTableSql } from './migrations.js';
import type { TableNames } from './table-name.js';

/** Attempts of a migration whose connection was lost under it. */
const MIGRATE_ATTEMPTS = 3;

/**
 * The connection went away under the migration, not the database: reset or a write to a closed
 * socket (a PGlite owner handing its directory over to the next: an app starting beside a CLI run
 * that ended died at start-up), a terminated or closing server session. All or nothing: it is tried again.
 */
function connectionLost(error: unknown): boolean {
  const { code, message } = ((error as { cause?: unknown } | null)?.cause ?? {}) as { code?: unknown; message?: unknown };
  return ['ECONNRESET', 'EPIPE', '57P01', '57P03'].includes(String(code)) || message === 'Connection terminated unexpectedly';
}

/**
 * Applies the missing migrations in one transaction under an advisory lock keyed on the table
 * name: processes starting together queue on the lock, and each later one finds nothing to do.
 * The pause between attempts is on the inbox's clock (a test moves it instead of waiting).
 */
export async function migrate(driver: Driver, names: TableNames, clock: Clock = systemClock): Promise<MigrateResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(driver, names);
    } catch (error) {
      if (attempt >= MIGRATE_ATTEMPTS || !connectionLost(error)) throw error;
      // 100 ms, then 200 ms: time for the next owner or session to come up.
      await pause(clock, 100 * attempt);
    }
  }
}

async function migrateOnce(driver: Driver, names: TableNames): Promise<MigrateResult> {
  try {
    return await driver.transaction(async (tx) => {
      if (names.schemaPrefix !== '') {
        // CREATE SCHEMA IF NOT EXISTS races across inboxes of one new schema: lock the schema first
        // (always before the table, so two migrations never wait on each other in opposite order).
        await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`rack-webhooks:schema:${names.schemaPrefix}`]);
        await tx.query(`CREATE SCHEMA IF NOT EXISTS ${names.schemaPrefix.slice(0, -1)}`);
      }
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [names.lockKey]);
      await tx.query(migrationsTableSql(names));
      const rows = await tx.query(`SELECT version FROM ${names.migrations}`);
      const done = new Set(rows.map((row) => Number(row['version'])));
      // A newer package migrated this table: its columns and states may mean things this version
      // would get wrong. Refuse before changing anything (the transaction rolls back).
      const newest = Math.max(0, ...done);
      if (newest > LATEST_VERSION) {
        throw new WebhookInboxError(
          'inbox_schema_newer',
          `The inbox table ${names.display} is at schema version ${newest}, newer than this version of rack-webhooks knows ` +
            `(${LATEST_VERSION}): upgrade rack-webhooks in this process (a newer one migrated the table), or use another table.`,
        );
      }
      const applied: number[] = [];
      for (const migration of MIGRATIONS) {
        if (done.has(migration.version)) continue;
        for (const statement of splitStatements(migration.sql(names))) await tx.query(statement);
        await tx.query(`INSERT INTO ${names.migrations} (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
        applied.push(migration.version);
      }
      return { applied, version: LATEST_VERSION };
    });
  } catch (error) {
    throw inboxError(error, names.display, 'migrating');
  }
}

/**
 * One statement per call: every client takes that through its extended protocol. The migrations
 * hold no semicolon inside a literal except where doubled quotes escape it, and no `;` + newline
 * inside a dollar-quoted function body, so splitting at `;` + newline outside dollar quotes is exact
 * for them (a test runs every migration on all three clients).
 */
function splitStatements(script: string): string[] {
  const statements: string[] = [];
  let pending = '';
  for (const piece of script.split(/;\s*\n/)) {
    pending = pending === '' ? piece : `${pending};\n${piece}`;
    // Inside a $tag$ ... $tag$ body while its tags are odd in number: the `;` was the body's own.
    if ((pending.match(/\$[A-Za-z_]*\$/g) ?? []).length % 2 === 1) continue;
    statements.push(pending);
    pending = '';
  }
  if (pending !== '') statements.push(pending);
  return statements.map((statement) => statement.trim().replace(/;$/, '')).filter((statement) => statement !== '');
}
