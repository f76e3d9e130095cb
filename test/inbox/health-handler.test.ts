/**
 * healthHandler over real HTTP on a real PostgreSQL: anyone who reaches the probes learns the status
 * and each check's state, never a host, a port, a role, a database, a table, a worker or an error
 * text, also with the database away; the detail goes to callers the application lets see it and to
 * the log (passwords in URLs masked), once per change of verdict.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox, healthHandler, type HealthEndpoints, type HealthLogRecord } from '../../src/inbox.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { maskPasswords } from '../../src/inbox/health/probe-log.js';
import { POSTGRES_URL, connectionRefusedUrl, databaseForFile, pgPoolTo, type TestDatabase } from './databases.js';
import { waitFor } from './fixtures/children.js';

let db: TestDatabase<'pg'>;
databaseForFile('pg', (opened) => (db = opened));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Answer {
  readonly status: number;
  readonly type: string | null;
  readonly text: string;
  readonly body: Record<string, unknown>;
}

/**
 * The probes on a real Node server, as an application mounts them: `/livez`, `/readyz`, `/health`
 * with the defaults, and `/ops/readyz`, `/ops/health` whose `detail` is granted to the operator's
 * header. `get(path, operator)` sends that header when asked.
 */
async function serve(probes: HealthEndpoints, ops: HealthEndpoints): Promise<(path: string, operator?: boolean) => Promise<Answer>> {
  const routes: Record<string, HealthEndpoints['live']> = {
    '/livez': probes.live,
    '/readyz': probes.ready,
    '/health': probes.health,
    '/ops/readyz': ops.ready,
    '/ops/health': ops.health,
  };
  const server = createServer((req, res) => {
    void routes[req.url ?? '']!(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return async (path, operator = false) => {
    const response = await fetch(`${origin}${path}`, { headers: operator ? { 'x-operator': 'let-me-see' } : {} });
    const text = await response.text();
    return { status: response.status, type: response.headers.get('content-type'), text, body: JSON.parse(text) as Record<string, unknown> };
  };
}

/** Detail for the request that carries the operator's header only. */
const operatorOnly = (req: IncomingMessage) => req.headers['x-operator'] === 'let-me-see';

function pool(url: string) {
  const client = pgPoolTo(url);
  cleanups.push(() => client.end());
  return client;
}

const UNKNOWN_REST = { workers: 'unknown', backlog: 'unknown', dead: 'unknown', refusals: 'unknown', gaps: 'unknown' };

describe('healthHandler with the database away: strangers learn the status and check names only', () => {
  // Each one a way a driver's error names what a stranger must not learn.
  const cases = [
    {
      name: 'connection refused (host and port)',
      url: async () => (await connectionRefusedUrl()).replace('postgres@', 'probe_role_secret:probe_password_secret@'),
      reason: /ECONNREFUSED 127\.0\.0\.1:\d+/,
      health: 'unreachable',
    },
    {
      name: 'a host name that does not resolve (an internal DNS name)',
      url: async () => POSTGRES_URL.replace(/@[^/]+\//, '@rack-probe-db-secret.invalid:5432/'),
      reason: /ENOTFOUND rack-probe-db-secret\.invalid/,
      health: 'unreachable',
    },
    {
      name: 'a role the server does not know',
      url: async () => POSTGRES_URL.replace('postgres@', 'probe_role_secret@'),
      reason: /role "probe_role_secret" does not exist/,
      health: 'unhealthy',
    },
    {
      name: 'a database the server does not have',
      url: async () => POSTGRES_URL.replace(/\/[^/]*$/, '/probe_db_secret'),
      reason: /database "probe_db_secret" does not exist/,
      health: 'unhealthy',
    },
  ];

  it.each(cases)(
    '$name: 503 with { status, checks }, nothing else; the operator and the log get the reason',
    async ({ url, reason, health }) => {
      const target = await url();
      const port = new URL(target).port || '5432';
      const table = 'probe_schema_secret.probe_table_secret';
      const inbox = createInbox({ database: pool(target), table });
      const records: HealthLogRecord[] = [];
      const logger = (record: HealthLogRecord) => records.push(record);
      const get = await serve(
        healthHandler(inbox, { cacheMs: 0, logger }),
        healthHandler(inbox, { cacheMs: 0, detail: operatorOnly, logger: false }),
      );

      const ready = await get('/readyz');
      expect(ready).toMatchObject({ status: 503, type: 'application/json; charset=utf-8' });
      expect(ready.text).toBe('{"status":"not_ready","checks":{"database":"failing","schema":"unknown"}}');
      const report = await get('/health');
      expect(report.status).toBe(503);
      expect(report.body).toEqual({ status: health, checks: { database: 'failing', schema: 'unknown', ...UNKNOWN_REST } });
      // The operator's endpoints answer a request without the header as the defaults do, and the
      // default endpoints give the header nothing more.
      expect(await get('/ops/readyz')).toEqual(ready);
      expect(await get('/ops/health')).toEqual(report);
      expect((await get('/health', true)).text).toBe(report.text);
      for (const text of [ready.text, report.text]) {
        for (const secret of [
          '127.0.0.1',
          'localhost',
          `:${port}`,
          'ECONNREFUSED',
          'probe_',
          'postgres',
          'test',
          'does not exist',
          'role',
          'rack-probe',
          'invalid',
          'ENOTFOUND',
        ])
          expect(text).not.toContain(secret);
      }
      expect((await get('/livez')).text).toBe('{"status":"live"}');

      // The operator's request: the reasons, and the whole report.
      const readyDetail = await get('/ops/readyz', true);
      expect(readyDetail.status).toBe(503);
      expect(readyDetail.body).toEqual({
        status: 'not_ready',
        checks: { database: 'failing', schema: 'unknown' },
        reasons: [expect.stringMatching(reason)],
      });
      const reportDetail = await get('/ops/health', true);
      expect(reportDetail.body).toMatchObject({
        status: health,
        ok: false,
        reasons: [expect.stringMatching(reason)],
        database: { reachable: health !== 'unreachable', error: expect.stringMatching(reason) },
        workers: { live: 0, gone: 0, list: [] },
      });

      // The log: one record per probe for the outage, however often it is probed; no password.
      await get('/readyz');
      await get('/health');
      expect(records.map((record) => [record.level, record.probe, record.status])).toEqual([
        ['warn', 'ready', 'not_ready'],
        ['warn', 'health', health],
      ]);
      expect(records[0]!.reasons).toEqual([expect.stringMatching(reason)]);
      expect(records[0]!.message).toMatch(/^ready probe: not_ready \(database failing, schema unknown\): /);
      expect(JSON.stringify(records)).not.toContain('probe_password_secret');
    },
  );
});

describe('healthHandler with the database up', () => {
  it('a stranger sees each check; the detail names the table, and the worker with its host and pid', async () => {
    const table = `${db.schema}.probe_table_secret`;
    const inbox = createInbox({ database: db.database, table });
    const records: HealthLogRecord[] = [];
    const logger = (record: HealthLogRecord) => records.push(record);
    const get = await serve(
      healthHandler(inbox, { cacheMs: 0, logger }),
      healthHandler(inbox, { cacheMs: 0, detail: operatorOnly, logger: false }),
    );

    // Never migrated: the schema fails, and only the operator learns the table's name.
    const unmigrated = await get('/readyz');
    expect(unmigrated.status).toBe(503);
    expect(unmigrated.text).toBe('{"status":"not_ready","checks":{"database":"ok","schema":"failing"}}');
    expect((await get('/ops/readyz')).text).toBe(unmigrated.text);
    expect((await get('/ops/readyz', true)).body).toEqual({
      status: 'not_ready',
      checks: { database: 'ok', schema: 'failing' },
      reasons: [`the inbox table ${table} was never migrated: run inbox.migrate() or rack-webhooks inbox migrate`],
    });
    expect((await get('/health')).body).toEqual({
      status: 'unhealthy',
      checks: { database: 'ok', schema: 'failing', ...UNKNOWN_REST },
    });

    await inbox.migrate();
    expect(await get('/readyz')).toMatchObject({ status: 200, text: '{"status":"ready","checks":{"database":"ok","schema":"ok"}}' });
    // No worker yet: a warning, still 200.
    expect(await get('/health')).toMatchObject({
      status: 200,
      body: {
        status: 'warning',
        checks: { database: 'ok', schema: 'ok', workers: 'warning', backlog: 'ok', dead: 'ok', refusals: 'ok', gaps: 'ok' },
      },
    });

    // Live means seen within 3 beats: 50 ms beats left 150 ms between the /health that saw it live and
    // the next probe, which the loaded machine missed (a warning, a log record more). 1 s beats leave 3 s.
    const worker = inbox.work(createReceiver({ secrets: 'k', inbox }), { workerId: 'probe-worker-secret', heartbeatMs: 1000 });
    cleanups.push(() => worker.stop());
    const ok = await waitFor(
      async () => {
        const answer = await get('/health');
        return answer.status === 200 && answer.body['status'] === 'ok' ? answer : undefined;
      },
      10_000,
      () => 'the worker to show as live',
    );
    expect(ok.text).toBe(
      '{"status":"ok","checks":{"database":"ok","schema":"ok","workers":"ok","backlog":"ok","dead":"ok","refusals":"ok","gaps":"ok"}}',
    );
    for (const secret of ['probe-worker-secret', hostname(), String(process.pid), 'probe_table_secret', db.schema])
      expect(ok.text).not.toContain(secret);
    expect((await get('/ops/health')).text).toBe(ok.text);
    const detail = await get('/ops/health', true);
    expect(detail.body).toMatchObject({
      status: 'ok',
      checks: { workers: 'ok' },
      workers: { live: 1, list: [{ id: 'probe-worker-secret', host: hostname(), pid: process.pid, live: true }] },
    });

    // The log: the first verdicts (not ok), then back to ok, each once.
    expect(records.map((record) => [record.level, record.probe, record.status])).toEqual([
      ['warn', 'ready', 'not_ready'],
      ['warn', 'health', 'unhealthy'],
      ['info', 'ready', 'ready'],
      ['warn', 'health', 'warning'],
      ['info', 'health', 'ok'],
    ]);
  });

  it('detail: true shows everyone the report; a detail function that throws, rejects or answers truthy-but-not-true shows nothing', async () => {
    const table = `${db.schema}.probe_detail`;
    const inbox = createInbox({ database: db.database, table });
    await inbox.migrate();
    const open = healthHandler(inbox, { cacheMs: 0, detail: true, logger: false });
    const shown = await open.ready(new Request('http://probe.test/readyz'));
    expect(await shown.json()).toEqual({ status: 'ready', checks: { database: 'ok', schema: 'ok' }, reasons: [] });
    expect(await (await open.health()).json()).toMatchObject({
      status: 'warning',
      reasons: [expect.any(String)],
      schema: { current: true },
    });

    const closed = [
      () => {
        throw new Error('auth backend down');
      },
      () => Promise.reject(new Error('auth backend down')),
      () => 'yes' as unknown as boolean,
      () => Promise.resolve(1 as unknown as boolean),
    ];
    for (const detail of closed) {
      const probes = healthHandler(inbox, { cacheMs: 0, detail, logger: false });
      expect(await (await probes.ready(new Request('http://probe.test/readyz'))).json()).toEqual({
        status: 'ready',
        checks: { database: 'ok', schema: 'ok' },
      });
      expect(Object.keys((await (await probes.health()).json()) as object)).toEqual(['status', 'checks']);
    }
    // A fetch-style request reaches the function as it came.
    const byHeader = healthHandler(inbox, {
      cacheMs: 0,
      logger: false,
      detail: async (request: Request) => request.headers.get('x-operator') === 'me',
    });
    expect(await (await byHeader.ready(new Request('http://probe.test/', { headers: { 'x-operator': 'me' } }))).json()).toHaveProperty(
      'reasons',
      [],
    );
    expect(await (await byHeader.ready(new Request('http://probe.test/'))).json()).not.toHaveProperty('reasons');

    expect(() => healthHandler({} as never)).toThrow(TypeError);
    expect(() => healthHandler(inbox, { cacheMs: -1 })).toThrow(RangeError);
    expect(() => healthHandler(inbox, { maxPendingAgeMs: 0 })).toThrow(/maxPendingAgeMs must be a finite number of ms > 0, got 0/);
    expect(() => healthHandler(inbox, { detail: 'yes' as never })).toThrow(
      /healthHandler\(\{ detail \}\) expects true, false or a function \(request\) => boolean/,
    );
  });
});

describe('healthHandler({ ready }): going unready for a shutdown', () => {
  it('answers 503 shutting_down at once once ready() is false (the cached 200 aside), without asking the database', async () => {
    const inbox = createInbox({ database: db.database, table: `${db.schema}.probe_shutdown` });
    await inbox.migrate();
    let accepting = true;
    const probes = healthHandler(inbox, { cacheMs: 60_000, logger: false, ready: () => accepting });
    const operator = healthHandler(inbox, { cacheMs: 60_000, logger: false, detail: true, ready: () => accepting });
    const readiness = async (endpoints: HealthEndpoints) => {
      const response = await endpoints.ready();
      return { status: response.status, body: (await response.json()) as unknown };
    };
    expect(await readiness(probes)).toEqual({ status: 200, body: { status: 'ready', checks: { database: 'ok', schema: 'ok' } } });
    accepting = false;
    expect(await readiness(probes)).toEqual({ status: 503, body: { status: 'shutting_down', checks: { shutdown: 'failing' } } });
    expect(await readiness(operator)).toEqual({
      status: 503,
      body: {
        status: 'shutting_down',
        checks: { shutdown: 'failing' },
        reasons: ['this process is shutting down: it still answers the deliveries that reach it, and takes no more once its drain ends'],
      },
    });
    expect((await probes.live()).status).toBe(200);

    // Not a query: an inbox whose database refuses connections still answers shutting_down.
    const away = createInbox({ database: pool(await connectionRefusedUrl()), table: 'probe_away' });
    expect(await readiness(healthHandler(away, { cacheMs: 0, logger: false, ready: () => false }))).toEqual({
      status: 503,
      body: { status: 'shutting_down', checks: { shutdown: 'failing' } },
    });
    // A ready() that throws is not ready; a ready that is not a function is refused.
    const throwing = () => {
      throw new Error('no state');
    };
    expect((await readiness(healthHandler(inbox, { logger: false, ready: throwing }))).status).toBe(503);
    expect(() => healthHandler(inbox, { ready: true as never })).toThrow(
      /healthHandler\(\{ ready \}\) expects a function \(\) => boolean, e\.g\. shutdown\.ready/,
    );
  });
});

describe('the probe log', () => {
  it('masks the password of a URL or a password= setting in the detail it logs; the answer carries none of it', async () => {
    const leak = 'could not connect with postgres://app:hunter2@db.internal:5432/prod (host=db.internal password=hunter2 user=app)';
    const records: HealthLogRecord[] = [];
    const probes = healthHandler(
      {
        readiness: () => Promise.reject(new Error(leak)),
        health: () => Promise.reject(new Error(leak)),
      },
      { cacheMs: 0, logger: (record) => records.push(record) },
    );
    const ready = await probes.ready();
    expect(ready.status).toBe(503);
    expect(await ready.text()).toBe('{"status":"not_ready","checks":{"database":"unknown","schema":"unknown"}}');
    const health = await probes.health();
    expect(await health.json()).toEqual({ status: 'unhealthy', checks: { database: 'unknown', schema: 'unknown', ...UNKNOWN_REST } });
    const masked = 'could not connect with postgres://app:***@db.internal:5432/prod (host=db.internal password=*** user=app)';
    expect(records.map((record) => record.reasons)).toEqual([[masked], [masked]]);
    expect(JSON.stringify(records)).not.toContain('hunter2');
  });

  it('maskPasswords leaves text without a password as it is', () => {
    expect(maskPasswords('connect ECONNREFUSED 127.0.0.1:5432')).toBe('connect ECONNREFUSED 127.0.0.1:5432');
    expect(maskPasswords('postgres://app@db:5432/prod')).toBe('postgres://app@db:5432/prod');
    expect(maskPasswords("postgresql://u:p%40ss@h/db and PASSWORD = 'x y'")).toBe('postgresql://u:***@h/db and PASSWORD = ***');
  });
});
