/**
 * healthHandler's readiness with a database that stops answering behind an open connection (the
 * TCP proxy in front of the shared PostgreSQL holds what the client sends): /readyz answers 503
 * not_ready within `readyTimeoutMs` instead of hanging, probes meanwhile add no stuck query, and it
 * is ready again once the database answers. Seen once at load 20 to 24: /readyz silent for 60 s.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox, healthHandler } from '../../src/inbox.js';
import { within } from '../kit/time.js';
import { POSTGRES_URL, databaseForFile, type TestDatabase } from './databases.js';
import { startTcpProxy } from './fixtures/tcp-proxy.mjs';

let db: TestDatabase<'pg'>;
databaseForFile('pg', (opened) => (db = opened));

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const READY_TIMEOUT_MS = 500;

describe('healthHandler readiness against a database that stops answering', () => {
  it(
    'answers 503 not_ready within readyTimeoutMs, asks no second stuck query, and 200 once the database answers',
    { timeout: 30_000 },
    async () => {
      const table = `${db.schema}.probe_stalled`;
      await createInbox({ database: db.database, table }).migrate();
      const target = new URL(POSTGRES_URL);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      // One connection: a second readiness query would wait for it in the pool, where waitingCount shows it.
      const pool = new pg.Pool({ connectionString: proxy.url(POSTGRES_URL), max: 1, connectionTimeoutMillis: 5000 });
      pool.on('error', () => {});
      cleanups.push(() => pool.end());
      // Closed first: it resets the held connection, so that the stuck query settles and the pool can end.
      cleanups.push(() => proxy.close());
      const probes = healthHandler(createInbox({ database: pool, table }), {
        cacheMs: 0,
        readyTimeoutMs: READY_TIMEOUT_MS,
        detail: true,
        logger: false,
      });
      const readiness = async () => {
        const response = await within(probes.ready(), 10_000, '/readyz');
        return { status: response.status, body: (await response.json()) as unknown };
      };
      expect(await readiness()).toEqual({ status: 200, body: { status: 'ready', checks: { database: 'ok', schema: 'ok' }, reasons: [] } });

      proxy.stall();
      const notReady = {
        status: 503,
        body: {
          status: 'not_ready',
          checks: { database: 'failing', schema: 'unknown' },
          reasons: [`the database did not answer the readiness check within ${READY_TIMEOUT_MS} ms`],
        },
      };
      const startedAt = Date.now();
      expect(await readiness()).toEqual(notReady);
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(READY_TIMEOUT_MS - 5);
      // The next probes wait on the same stuck check: nothing queues behind it.
      expect(await readiness()).toEqual(notReady);
      expect(await readiness()).toEqual(notReady);
      expect({ total: pool.totalCount, waiting: pool.waitingCount }).toEqual({ total: 1, waiting: 0 });

      proxy.unstall();
      await expect.poll(async () => (await readiness()).status, { timeout: 10_000, interval: 50 }).toBe(200);
    },
  );
});
