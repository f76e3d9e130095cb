/**
 * `rack-webhooks inbox health` on a real PostgreSQL: its exit codes (0 ok or warning, 1 unhealthy,
 * 2 could not check), what it prints for people and as JSON (the detail the HTTP probes keep from
 * strangers: test/inbox/health-handler.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { createInbox } from '../../src/inbox.js';
import { LATEST_VERSION } from '../../src/inbox/schema/migrations.js';
import { POSTGRES_URL, connectionRefusedUrl, databaseForFile, type TestDatabase } from '../inbox/databases.js';
import { captureOutput, cli, seedDeliveries } from './inbox-helpers.js';
import { UNREACHABLE_CHECKS } from '../inbox/helpers.js';
import { waitFor } from '../kit/time.js';

captureOutput();

let db: TestDatabase<'pg'>;
databaseForFile('pg', (opened) => (db = opened));

let tableCount = 0;
const newTable = () => `${db.schema}.h${++tableCount}`;
const on = (table: string) => ['--database', POSTGRES_URL, '--table', table];

describe('rack-webhooks inbox health', () => {
  it('exits 1 on a table never migrated, 0 with a warning once migrated and empty, 1 with deliveries waiting and no worker', async () => {
    const table = newTable();
    const missing = await cli('inbox', 'health', ...on(table));
    expect(missing).toEqual({
      code: 1,
      err: '',
      out:
        `status: unhealthy\n  - the inbox table ${table} was never migrated: run inbox.migrate() or rack-webhooks inbox migrate\n` +
        `database        reachable\nschema          not migrated (this package needs version ${LATEST_VERSION})\n` +
        'workers         0 live\noldest pending  none\ndead            0\nrefused (1 h)   none\n' +
        'log gaps        n/a (no incidents table in this schema: run rack-webhooks inbox migrate)\n',
    });

    expect((await cli('inbox', 'migrate', ...on(table))).code).toBe(0);
    expect(await cli('inbox', 'health', ...on(table))).toEqual({
      code: 0,
      err: '',
      out:
        'status: warning\n  - no worker is running: new deliveries will wait until one starts\n' +
        `database        reachable\nschema          version ${LATEST_VERSION} (current)\n` +
        'workers         0 live\noldest pending  none\ndead            0\nrefused (1 h)   none\n' +
        'log gaps        none open (found by inbox.watch())\n',
    });

    // Four deliveries, a worker that ran them (one done, two dead, one ignored), then stopped.
    await seedDeliveries(db.database, table);
    const inbox = createInbox({ database: db.database, table });
    const receiver = (await import('../../src/receiver/create-receiver.js')).createReceiver({ secrets: 'k', inbox });
    await receiver.receive({ body: '{}', headers: { 'service-signature': 't=1,v1=00' } }).catch(() => {});
    await inbox.close();
    await db.query(`UPDATE ${table} SET state = 'pending', received_at = now() - interval '2 hours' WHERE state = 'dead'`);
    const json = await cli('inbox', 'health', ...on(table), '--json');
    expect(json.code).toBe(1);
    const report = JSON.parse(json.out) as Record<string, unknown>;
    expect(report).toMatchObject({
      status: 'unhealthy',
      ok: false,
      reasons: [
        '2 deliveries waiting and no worker is running',
        'the oldest pending delivery has waited 2.0 h (more than 15 min)',
        '1 refused delivery in the last hour (malformed_header 1)',
      ],
      checks: { database: 'ok', schema: 'ok', workers: 'failing', backlog: 'failing', dead: 'ok', refusals: 'warning', gaps: 'ok' },
      database: { reachable: true },
      schema: { version: LATEST_VERSION, expected: LATEST_VERSION, current: true, newerThanPackage: false },
      workers: { live: 0, gone: 0, list: [] },
      dead: 0,
      refusalsLastHour: { total: 1, byCode: [{ code: 'malformed_header', count: 1 }] },
    });
    // A bound of 3 hours leaves only the missing worker.
    expect((await cli('inbox', 'health', ...on(table), '--max-pending-age', '10800')).out).toMatch(
      /^status: unhealthy\n {2}- 2 deliveries waiting and no worker is running\n {2}- 1 refused delivery/,
    );
  });

  it('exits 0 when a worker is live, and lists it', async () => {
    const table = newTable();
    const inbox = createInbox({ database: db.database, table });
    await inbox.migrate();
    const { createReceiver } = await import('../../src/receiver/create-receiver.js');
    const worker = inbox.work(createReceiver({ secrets: 'k', inbox }), { workerId: 'cli-health-worker', concurrency: 2 });
    try {
      const result = await waitForExit(table, 0);
      expect(result.out).toMatch(
        new RegExp(`^status: ok\\ndatabase {8}reachable\\nschema {10}version ${LATEST_VERSION} \\(current\\)\\nworkers {9}1 live\\n`),
      );
      expect(result.out).toMatch(new RegExp(`\\n {2}cli-health-worker {2}live {2}\\S+ pid ${process.pid} {2}running 0/2 {2}last seen `));
    } finally {
      await worker.stop();
    }
  });

  it('exits 2 when the database cannot be reached, and on a usage error', async () => {
    const refused = await connectionRefusedUrl();
    const result = await cli('inbox', 'health', '--database', refused);
    expect(result.code).toBe(2);
    expect(result.out).toMatch(/^status: unreachable\n {2}- cannot reach the database at 127\.0\.0\.1:\d+: .*ECONNREFUSED/);
    const json = await cli('inbox', 'health', '--database', refused, '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.out)).toMatchObject({
      status: 'unreachable',
      ok: false,
      checks: UNREACHABLE_CHECKS,
      database: { reachable: false },
    });
    const bad = await cli('inbox', 'health', ...on(newTable()), '--max-pending-age', 'soon');
    expect(bad).toMatchObject({ code: 2, out: '' });
    expect(bad.err).toMatch(/--max-pending-age must be a whole number of seconds/);
  });
});

/** Runs `inbox health` until it exits with `code` (the worker's first heartbeat is on its way). */
async function waitForExit(table: string, code: number) {
  let last: Awaited<ReturnType<typeof cli>> | undefined;
  // Past the bound, the last run: the test's assertion then shows what it printed.
  return waitFor(
    async () => {
      last = await cli('inbox', 'health', ...on(table));
      return last.code === code && last;
    },
    15_000,
    () => `inbox health to exit ${code}`,
    50,
  ).catch(() => last!);
}
