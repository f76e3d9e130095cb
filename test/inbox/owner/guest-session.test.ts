/**
 * A guest of a PGlite directory shares the owner's one session: nothing it does there may change
 * what the owner's inbox does next (issue 38, point 4). Each statement below once made the owner
 * refuse every delivery, or store them where a restart loses them; a guest idle in a transaction,
 * or asleep in pg_sleep, held every delivery past its 503.
 */
import { mkdtempSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createReceiver } from '../../../src/index.js';
import { createInbox } from '../../../src/inbox/create-inbox.js';
import { openPGlite } from '../../../src/database/owner/open.js';
import { servePGlite, type ServablePGlite } from '../../../src/database/owner/serve.js';
import { createSignedRequestSync } from '../../../src/testing/signed-request.js';
import { pgliteDirectory } from '../../kit/pglite-directory.js';

const SECRET = 'guest-session-secret';
const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => fs.rm(dir, { recursive: true, force: true }))), 60_000);

function newDatabaseDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rwt-guest-'));
  made.push(dir);
  return pgliteDirectory(join(dir, 'db'));
}

let tick = 0;
/** A new event (its own id) as the rack signs it. */
function delivery() {
  tick += 1;
  const body = JSON.stringify({
    action: 'app:create',
    status: 'success',
    timestamp: `2026-01-01T00:00:${String(tick % 60).padStart(2, '0')}.${String(tick).padStart(6, '0')}Z`,
    data: { name: `app-${tick}`, rack: 'r', actor: 'x' },
  });
  const request = createSignedRequestSync(body, { secrets: SECRET });
  return { body: request.bytes, headers: request.headers };
}

async function ownerWithInbox() {
  const dir = newDatabaseDir();
  const owner = await openPGlite(dir);
  const db = owner.client as PGlite;
  const inbox = createInbox({ database: owner, table: 'deliveries', storeRetry: { maxWaitMs: 2_000 } });
  await inbox.migrate();
  const receiver = createReceiver<unknown>({ secrets: SECRET, inbox });
  const stored = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM public.deliveries')).rows[0]!.n;
  return { dir, owner, db, receiver, stored };
}

describe('a guest cannot change the owner’s session', () => {
  it('SET, SET ROLE, SET SESSION AUTHORIZATION, set_config, RESET ALL, UNLISTEN and a temporary table named like the inbox’s: each put back once the guest’s transaction ends; every delivery after each is stored in the inbox’s table', async () => {
    const { dir, owner, db, receiver, stored } = await ownerWithInbox();
    await db.exec("CREATE ROLE rwt_reader NOLOGIN; SET application_name = 'the owner'");
    const heard: string[] = [];
    await db.listen('rwt_owner_channel', (payload) => heard.push(payload));
    const session = async () =>
      (
        await db.query(
          `SELECT current_setting('search_path') AS search_path, current_setting('default_transaction_read_only') AS read_only,
                  current_setting('application_name') AS application_name, current_user::text AS "user", session_user::text AS session,
                  (SELECT count(*)::int FROM pg_class WHERE relnamespace = pg_my_temp_schema()) AS temporary`,
        )
      ).rows[0] as Record<string, unknown>;
    const before = await session();
    expect(before).toMatchObject({ search_path: 'public', read_only: 'off', application_name: 'the owner', temporary: 0 });

    const guest = await openPGlite(dir);
    const pool = guest.client as pg.Pool;
    const statements = [
      'SET search_path TO pg_catalog',
      'SET default_transaction_read_only = on',
      'SET ROLE rwt_reader',
      'SET SESSION AUTHORIZATION rwt_reader',
      "SELECT set_config('search_path', 'nowhere', false)",
      'RESET ALL',
      "DO $$ BEGIN EXECUTE 'UNLISTEN *'; END $$",
      'CREATE TEMP TABLE deliveries (LIKE public.deliveries INCLUDING ALL)',
      'CREATE TEMP TABLE deliveries (n serial); CREATE TEMP VIEW rwt_view AS SELECT 1',
      'BEGIN; SET search_path TO pg_catalog; CREATE TEMP TABLE deliveries (LIKE public.deliveries INCLUDING ALL); COMMIT',
    ];
    for (const statement of statements) {
      await pool.query(statement);
      const { outcome } = await receiver.receive(delivery());
      expect({ statement, outcome }).toEqual({ statement, outcome: 'accepted' });
      expect({ statement, ...(await session()) }).toEqual({ statement, ...before });
    }
    expect(await stored()).toBe(statements.length);
    await db.query("SELECT pg_notify('rwt_owner_channel', 'still heard')");
    await expect.poll(() => heard, { timeout: 5_000 }).toEqual(['still heard']);
    await guest.close();
    await owner.close();
    // What was acknowledged is in the table a restart finds.
    const reopened = await openPGlite(dir);
    expect((await (reopened.client as PGlite).query<{ n: number }>('SELECT count(*)::int AS n FROM deliveries')).rows[0]!.n).toBe(
      statements.length,
    );
    await reopened.close();
  }, 90_000);

  it('a guest idle in a transaction is cut off after 5 s and rolled back: the owner’s deliveries meanwhile are stored, not answered 503', async () => {
    const { dir, owner, stored } = await ownerWithInbox();
    const inbox = createInbox({ database: owner, table: 'deliveries' }); // the default storeRetry: 20 s
    const patient = createReceiver<unknown>({ secrets: SECRET, inbox });
    const guest = await openPGlite(dir);
    const client = await (guest.client as pg.Pool).connect();
    const cutOff = new Promise<Error>((resolve) => client.once('error', resolve));
    await client.query('BEGIN');
    await client.query('SELECT count(*) FROM deliveries');
    const answers = await Promise.all([patient.receive(delivery()), patient.receive(delivery())]);
    expect(answers.map((answer) => answer.outcome)).toEqual(['accepted', 'accepted']);
    expect(await cutOff).toMatchObject({
      code: '25P03',
      message: 'a guest of a PGlite directory may stay idle in a transaction at most 5000 ms: its transaction was rolled back',
    });
    expect(await stored()).toBe(2);
    client.release(true);
    await guest.close();
    await owner.close();
  }, 60_000);

  it('pg_sleep is refused to a guest at once, in one line; the guest’s connection goes on', async () => {
    const { dir, owner } = await ownerWithInbox();
    const guest = await openPGlite(dir);
    const pool = guest.client as pg.Pool;
    for (const statement of ['SELECT pg_sleep(40)', "SELECT 1, pg_sleep_for('40 seconds')", 'SELECT PG_SLEEP (40)']) {
      await expect(pool.query(statement)).rejects.toMatchObject({
        code: '0A000',
        message:
          "pg_sleep is not served to guests of a PGlite directory: PGlite cannot interrupt it, and the owner's deliveries would wait for it",
      });
    }
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await guest.close();
    await owner.close();
  }, 60_000);
});

describe('servePGlite', () => {
  async function served(db: ServablePGlite, options: { holdMs?: number } = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'rwt-serve-'));
    made.push(dir);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(join(dir, '.s.PGSQL.1'), resolve));
    const serving = servePGlite(Promise.resolve(db), server, options);
    const client = new pg.Client({ host: dir, port: 1, user: 'postgres', database: 'postgres' });
    return { client, serving };
  }

  it('a guest holding PGlite past holdMs, however busy, is cut off and rolled back', async () => {
    const db = new PGlite(newDatabaseDir());
    await db.exec('CREATE TABLE t (v int)');
    const { client, serving } = await served(db, { holdMs: 1_000 });
    await client.connect();
    const errors: unknown[] = [];
    client.on('error', (error) => errors.push(error)); // the cut came between two statements
    await client.query('BEGIN');
    await client.query('INSERT INTO t VALUES (1)');
    for (;;) {
      try {
        await client.query('SELECT 1');
      } catch (error) {
        errors.push(error);
        break;
      }
    }
    expect(errors).toContainEqual(
      expect.objectContaining({
        code: '25P04',
        message: 'a guest of a PGlite directory may hold it at most 1000 ms at a time: its transaction was rolled back',
      }),
    );
    await expect.poll(async () => (await db.query('SELECT count(*)::int AS n FROM t')).rows, { timeout: 10_000 }).toEqual([{ n: 0 }]);
    await serving.close();
    await db.close();
  }, 60_000);

  it('a PGlite without the private exclusive-queue methods serves no guest: each is refused in one line', async () => {
    const db = new PGlite(newDatabaseDir());
    await db.waitReady;
    const bare: ServablePGlite = {
      execProtocolRaw: (message, options) => db.execProtocolRaw(message, options),
      execProtocol: (message, options) => db.execProtocol(message, options),
      query: (text) => db.query(text),
    };
    const { client, serving } = await served(bare);
    await expect(client.connect()).rejects.toThrow(
      /^this PGlite does not have the private _runExclusiveTransaction and _runExclusiveQuery methods the owner needs to serve guests without mixing their statements into its own transactions: guests are refused/,
    );
    await serving.close();
    await db.close();
  }, 60_000);
});
