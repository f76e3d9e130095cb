import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { CLIENT_KINDS, connectionRefusedUrl, openDatabase, pgPoolTo, type TestDatabase } from './databases.js';

// Proves the helper the inbox suites stand on: each kind opens, answers through its own API, and
// leaves nothing behind on close.
describe.each(CLIENT_KINDS)('openDatabase(%s)', (kind) => {
  it('answers select 1 through the native client and drops its schema on close (twice is fine)', async () => {
    const db: TestDatabase = await openDatabase(kind);
    try {
      expect(await nativeSelectOne(db)).toBe(1);
      expect(await db.query<{ n: number }>('select $1::int as n', [2])).toEqual([{ n: 2 }]);
      // The table name is usable as is, and lands in this test's own schema.
      await db.query(`create table ${db.table} (id int)`);
      const [row] = await db.query<{ schema: string }>(
        `select relnamespace::regnamespace::text as schema from pg_class where oid = '${db.table}'::regclass`,
      );
      expect(row?.schema).toBe(db.schema);
    } finally {
      await db.close();
    }
    await db.close();
    if (kind !== 'pglite') expect(await schemaExists(db.schema)).toBe(false);
  }, 30_000); // the first PGlite of a worker boots in 2.5 to 3.5 s, several times that on a busy machine
});

describe('openDatabase isolation', () => {
  it('gives two databases of the same kind different schemas', async () => {
    const [a, b] = await Promise.all([openDatabase('pg'), openDatabase('pg')]);
    try {
      expect(a.schema).not.toBe(b.schema);
      expect(await schemaExists(a.schema)).toBe(true);
      expect(await schemaExists(b.schema)).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('connectionRefusedUrl', () => {
  it('points at a port that refuses connections', async () => {
    const client = new pg.Client({ connectionString: await connectionRefusedUrl(), connectionTimeoutMillis: 2000 });
    await expect(client.connect()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

async function nativeSelectOne(db: TestDatabase): Promise<number> {
  switch (db.kind) {
    case 'pg':
      return (await (db as TestDatabase<'pg'>).database.query<{ one: number }>('select 1 as one')).rows[0]!.one;
    case 'postgres': {
      const sql = (db as TestDatabase<'postgres'>).database;
      return (await sql<{ one: number }[]>`select 1 as one`)[0]!.one;
    }
    case 'pglite':
      return (await (db as TestDatabase<'pglite'>).database.query<{ one: number }>('select 1 as one')).rows[0]!.one;
  }
}

async function schemaExists(schema: string): Promise<boolean> {
  const pool = pgPoolTo();
  try {
    return (await pool.query('select 1 from pg_namespace where nspname = $1', [schema])).rowCount === 1;
  } finally {
    await pool.end();
  }
}
