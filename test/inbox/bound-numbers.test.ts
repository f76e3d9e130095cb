/**
 * Issue 40, point 4: numbers are bound, never spliced into the SQL text. A console that lists with
 * 20 different limits (or filters by 20 action prefixes of different lengths) sends one statement
 * text, so one named statement per connection, not one per value, never freed.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox } from '../../src/inbox.js';
import { openDatabase, POSTGRES_URL, type TestDatabase } from './databases.js';

let database: TestDatabase<'pg'> | undefined;
let client: pg.Client | undefined;
afterEach(async () => {
  await client?.end();
  await database?.close();
  client = database = undefined;
});

describe('listing with many limits and prefixes', () => {
  it('prepares one statement on the connection, whatever the limit or the prefix length', async () => {
    database = await openDatabase('pg');
    await createInbox({ database: database.database, table: database.table }).migrate();
    client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    const inbox = createInbox({ database: client, table: database.table });
    const prepared = async () =>
      (await client!.query("SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%ORDER BY%LIMIT%'")).rows.length;
    for (let limit = 1; limit <= 20; limit++) await inbox.list({ limit });
    expect(await prepared()).toBe(1);
    for (const prefix of ['a:*', 'ab:*', 'app:*', 'app:b:*', 'app:budget:*']) await inbox.list({ action: prefix, limit: 3 });
    expect(await prepared()).toBe(2); // the same text with the prefix clause: one more, not five
  });
});
