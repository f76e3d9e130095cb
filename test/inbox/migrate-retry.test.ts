import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox, WebhookInboxError } from '../../src/inbox.js';
import { LATEST_VERSION } from '../../src/inbox/schema/migrations.js';
import { flush, ManualClock, waitFor } from '../kit/time.js';
import { openDatabase, POSTGRES_URL, type TestDatabase } from './databases.js';

/**
 * migrate() when the server ends its session under it (an owner handing over, a restart): the
 * migration is all or nothing, so it is tried again, three times at most, after 100 ms then 200 ms
 * on the inbox's clock. A session holding the table's migration lock keeps each attempt waiting
 * until the test terminates it, with pg_terminate_backend, as a restarting server does (57P01).
 */
const open: { db: TestDatabase; holder: pg.Client }[] = [];
afterEach(async () => {
  for (const { db, holder } of open.splice(0)) {
    await holder.end().catch(() => {});
    await db.close();
  }
});

async function migrationHeldUp() {
  const db = await openDatabase('pg');
  const holder = new pg.Client({ connectionString: POSTGRES_URL });
  await holder.connect();
  open.push({ db, holder });
  await holder.query('SELECT pg_advisory_lock(hashtext($1))', [`rack-webhooks:inbox:${db.table}`]);
  const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const clock = new ManualClock();
  const inbox = createInbox({ database: db.database, table: db.table, clock });
  let settled = false;
  const migrating = inbox.migrate().finally(() => (settled = true));
  migrating.catch(() => {}); // awaited by the test
  return {
    db,
    clock,
    migrating,
    settled: () => settled,
    /** Waits for the attempt to queue on the lock, then ends its session. */
    async cutTheAttempt() {
      const pid = await waitFor(
        async () =>
          (await holder.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [holderPid]))
            .rows[0]?.pid,
        10_000,
        () => 'an attempt waiting on the migration lock',
      );
      await holder.query('SELECT pg_terminate_backend($1)', [pid]);
    },
    /** Waits for the pause the migration set on the clock after a lost attempt. */
    async pauseSet() {
      return waitFor(
        () => (clock.live.length > 0 ? clock.live.map((timer) => timer.ms) : undefined),
        10_000,
        () => 'a pause on the clock',
      );
    },
    release: () => holder.query('SELECT pg_advisory_unlock_all()'),
  };
}

describe('migrate() after a lost connection (pg)', { timeout: 60_000 }, () => {
  it('tries again after 100 ms, then 200 ms, on the clock, and nothing runs before the clock says', async () => {
    const held = await migrationHeldUp();
    await held.cutTheAttempt();
    expect(await held.pauseSet()).toEqual([100]);
    await flush(5);
    expect(held.settled()).toBe(false); // waiting on the clock, not retrying yet
    expect(held.clock.fireNext()?.ms).toBe(100);
    await held.cutTheAttempt(); // the second attempt reached the lock: cut it too
    expect(await held.pauseSet()).toEqual([200]);
    await flush(5);
    expect(held.settled()).toBe(false);
    await held.release();
    expect(held.clock.fireNext()?.ms).toBe(200);
    const result = await held.migrating;
    expect(result.version).toBe(LATEST_VERSION);
    expect(result.applied.at(-1)).toBe(LATEST_VERSION);
    expect(held.clock.live).toEqual([]);
    const versions = await held.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${held.db.table}_migrations`);
    expect(versions[0]!.n).toBe(result.applied.length);
  });

  it('gives up after the third attempt with the connection error, and sets no further pause', async () => {
    const held = await migrationHeldUp();
    for (const pause of [100, 200]) {
      await held.cutTheAttempt();
      expect(await held.pauseSet()).toEqual([pause]);
      held.clock.fireNext();
    }
    await held.cutTheAttempt();
    const error = await held.migrating.catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(WebhookInboxError);
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('57P01');
    expect(held.clock.timers.map((timer) => timer.ms)).toEqual([100, 200]);
    expect(held.clock.live).toEqual([]);
  });
});
