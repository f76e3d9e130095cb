/**
 * Issue 38, point 3 on Node >= 22.12 (or >= 23.1) without a supervisor: examples/express-inbox.mjs
 * with REUSE_PORT=1 restarted in place, the new process listening on the same port (SO_REUSEPORT)
 * before the old one gets SIGTERM; 100 signed deliveries a second straight to the port, each once,
 * on keep-alive connections, through two restarts. Runs on this Node when it has reusePort, else on
 * the Node binary RACK_WEBHOOKS_NODE22 names (`npx -y node@22 -p process.execPath`); skipped
 * otherwise, with a line saying so. Linux only (SO_REUSEPORT balances connections there). Every
 * 2xx is stored; 0 refused only with net.ipv4.tcp_migrate_req=1 (see docs/deploying.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, POSTGRES_URL, type TestDatabase } from '../inbox/databases.js';
import { newKey, startExample, stopAllExamples, type Running } from '../examples/helpers.js';
import { finishAndTally, hundredMore, Sender } from './sender.js';

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const hasReusePort = major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
const NODE = hasReusePort ? process.execPath : process.env['RACK_WEBHOOKS_NODE22'];
if (NODE === undefined && process.platform === 'linux')
  console.warn(`reuse-port-restart: skipped on ${process.version}; set RACK_WEBHOOKS_NODE22 to a Node >= 22.12 binary to run it`);

const MIGRATE_REQ = '/proc/sys/net/ipv4/tcp_migrate_req';
const MIGRATES_QUEUE = existsSync(MIGRATE_REQ) && readFileSync(MIGRATE_REQ, 'utf8').trim() === '1';

let database: TestDatabase<'pg'> | undefined;
afterEach(async () => {
  await stopAllExamples();
  await database?.close();
  database = undefined;
});

/** A port free right now (the examples then share it through SO_REUSEPORT). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe.skipIf(NODE === undefined || process.platform !== 'linux')('an in-place restart with REUSE_PORT=1 (SO_REUSEPORT)', () => {
  it('answers every delivery 2xx and stores every 2xx through two restarts', { timeout: 180_000 }, async () => {
    database = await openDatabase('pg');
    const key = newKey();
    const port = await freePort();
    const env = {
      RACK_WEBHOOK_SECRETS: key,
      DATABASE_URL: POSTGRES_URL,
      INBOX_TABLE: database.table,
      SHUTDOWN_DRAIN_MS: '500',
      REUSE_PORT: '1',
      PORT: String(port),
    };
    let current: Running = await startExample('express-inbox.mjs', env, 60_000, NODE);
    const sender = new Sender(new URL(current.url), key, 100);
    sender.start();
    for (const _restart of [1, 2]) {
      await hundredMore(sender);
      const next = await startExample('express-inbox.mjs', env, 60_000, NODE); // listening: the port is shared
      expect(await current.stop(60_000)).toEqual({ code: 0, signal: null });
      current = next;
    }
    const { outcomes, rows, figures } = await finishAndTally(sender, database);
    console.info(`in-place restart (REUSE_PORT, ${NODE}, tcp_migrate_req ${MIGRATES_QUEUE ? 1 : 0}): ${JSON.stringify(figures)}`);
    expect(figures).toMatchObject({ otherStatus: 0, okNotStored: 0 });
    // The rows are the 2xx, and at most the few reset as their connection reached the old listener.
    expect(rows.length).toBeGreaterThanOrEqual(figures.answered2xx);
    expect(rows.length).toBeLessThanOrEqual(figures.sent);
    // Linux resets the connections still queued on a SO_REUSEPORT listener as it closes, unless
    // net.ipv4.tcp_migrate_req=1 (Linux >= 5.14) hands them to the new one: only then is 0 promised.
    if (MIGRATES_QUEUE) expect(outcomes.filter((outcome) => outcome.status !== 200).slice(0, 5)).toEqual([]);
    expect(await current.stop(60_000)).toEqual({ code: 0, signal: null });
  });
});
