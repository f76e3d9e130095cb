import pg from 'pg';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox, WebhookInboxError } from '../../src/inbox.js';
import { statementName } from '../../src/database/pg.js';
import { LATEST_VERSION } from '../../src/inbox/schema/migrations.js';
import { CLIENT_KINDS, openDatabase, POSTGRES_URL, type TestDatabase } from './databases.js';

const open: TestDatabase[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.close()));
});

describe('migrate() refuses a table migrated by a newer package', { timeout: 120_000 }, () => {
  for (const kind of CLIENT_KINDS) {
    it(`${kind}: throws inbox_schema_newer and changes nothing`, async () => {
      const db = await openDatabase(kind);
      open.push(db);
      const inbox = createInbox({ database: db.database, table: db.table });
      await inbox.migrate();
      const migrations = `${db.table}_migrations`;
      await db.query(`INSERT INTO ${migrations} (version, name) VALUES ($1, 'from the future')`, [LATEST_VERSION + 1]);
      const error = await inbox.migrate().catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(WebhookInboxError);
      expect(error).toMatchObject({ code: 'inbox_schema_newer', status: 500 });
      expect((error as Error).message).toContain(
        `schema version ${LATEST_VERSION + 1}, newer than this version of rack-webhooks knows (${LATEST_VERSION})`,
      );
      const versions = await db.query<{ version: number }>(`SELECT version FROM ${migrations} ORDER BY version`);
      expect(versions.map((row) => Number(row.version)).at(-1)).toBe(LATEST_VERSION + 1);
    });
  }

  it('still migrates a table at the current version (nothing to apply)', async () => {
    const db = await openDatabase('pg');
    open.push(db);
    const inbox = createInbox({ database: db.database, table: db.table });
    await inbox.migrate();
    expect(await inbox.migrate()).toEqual({ applied: [], version: LATEST_VERSION });
  });
});

describe('prepared statement names come from the table and the statement', { timeout: 60_000 }, () => {
  it('the same text gets the same name, whatever came first; the name shows the table', () => {
    const select = 'SELECT id FROM "s1"."deliveries" WHERE id = $1';
    expect(statementName(select)).toMatch(/^rack_webhooks_[0-9a-f]{16}_s1\.deliveries$/);
    expect(statementName(`INSERT INTO app.inbox (a) VALUES ($1)`)).toMatch(/^rack_webhooks_[0-9a-f]{16}_app\.inbox$/);
    expect(statementName('UPDATE deliveries SET state = $1')).toMatch(/^rack_webhooks_[0-9a-f]{16}_deliveries$/);
    expect(statementName('SELECT pg_advisory_xact_lock(hashtext($1))')).toMatch(/^rack_webhooks_[0-9a-f]{16}$/);
    // PostgreSQL cuts names at 63 bytes: the cut never reaches the hash.
    const long = `SELECT 1 FROM ${'x'.repeat(80)} WHERE a = $1`;
    expect(statementName(long)).toHaveLength(63);
    expect(statementName(long)).not.toBe(statementName(`${long} AND b = $2`));
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(statementName(a)).toBe(statementName(a));
        if (a !== b) expect(statementName(`SELECT 1 FROM t WHERE x = '${a}'`)).not.toBe(statementName(`SELECT 1 FROM t WHERE x = '${b}'`));
      }),
    );
  });

  it('on a real connection, two inboxes prepare statements named after their own tables', async () => {
    const db = await openDatabase('pg');
    open.push(db);
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const first = createInbox({ database: client, table: `${db.schema}.first` });
      const second = createInbox({ database: client, table: `${db.schema}.second` });
      await first.migrate();
      await second.migrate();
      await first.list({ state: 'dead', limit: 5 });
      await second.list({ state: 'dead', limit: 5 });
      const { rows } = await client.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name');
      const names = rows.map((row) => row.name);
      // Cut at 63 bytes, as PostgreSQL stores names: the table shows as far as it fits.
      expect(names).toContainEqual(expect.stringMatching(/_rwt_\w+\.first$/));
      expect(names).toContainEqual(expect.stringMatching(/_rwt_\w+\.second$/));
      expect(names.length).toBeGreaterThan(2);
      expect(names.filter((name) => !/^rack_webhooks_[0-9a-f]{16}(_rwt_\w+\.(first|second)\w*)?$/.test(name))).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
