/**
 * `rack-webhooks inbox forward`, end to end: a real PostgreSQL inbox receiving through the Node
 * adapter (the deployed receiver, production key), the built CLI as a real process following it,
 * and a local receiver (local key, its own dedup) that records every body it verified.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RETRY_DELAYS_MS } from '../../src/cli/commands/inbox/forward-post.js';
import { createInbox, openPGlite } from '../../src/inbox.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { createSignedRequestSync } from '../../src/testing/signed-request.js';
import { POSTGRES_URL, openDatabase, type TestDatabase } from '../inbox/databases.js';
import { pgliteDirectory } from '../kit/pglite-directory.js';
import {
  LOCAL_KEY,
  PROD_KEY,
  body,
  deliver,
  forwardedIds,
  localReceiver,
  productionReceiver,
  startForward,
  type LocalReceiver,
} from './forward-helpers.js';
import { killChildren, removeTempDirs, tempDir } from './helpers.js';
import { captureOutput, cli } from './inbox-helpers.js';

captureOutput();
afterEach(killChildren);
afterAll(removeTempDirs);
describe('inbox forward on PostgreSQL', { timeout: 60_000 }, () => {
  let db: TestDatabase<'pg'>;
  let production: { url: string; close(): Promise<void> };
  let local: LocalReceiver;
  let tableCount = 0;
  let table: string;

  beforeAll(async () => {
    db = await openDatabase('pg');
  });
  afterAll(async () => {
    await db?.close();
  });
  afterEach(async () => {
    await production?.close();
    await local?.close();
  });

  async function fresh(): Promise<void> {
    table = `${db.schema}.f${++tableCount}`;
    production = await productionReceiver(db.database, table);
    local = await localReceiver();
  }

  const source = () => ['--database', POSTGRES_URL, '--table', table];
  /** From id 1, once, to the local receiver with a key it does not hold: each delivery answered 401; stops at the first. */
  const forwardWithWrongKey = () =>
    cli('inbox', 'forward', ...source(), '--to', local.url, '--key', 'not-the-local-key', '--from-id', '1', '--once', '--stop-on-error');
  const sourceRows = async () => ({
    deliveries: await db.query(`SELECT * FROM ${table} ORDER BY id`),
    attempts: await db.query(`SELECT * FROM ${table}_attempts ORDER BY delivery_id, attempt`),
  });

  it('follows new deliveries: each arrives once, in storage order, byte for byte, verified with the local key; the source rows unchanged', async () => {
    await fresh();
    const forward = startForward([...source(), '--to', local.url, '--key', LOCAL_KEY]);
    await forward.waitFor('err', /^rack-webhooks inbox forward: forwarding deliveries from id 1 of /);
    const sent = [body('app:create'), body(), body('app:budget:cap', 'beta'), body()];
    for (const text of sent) await deliver(production.url, text);
    await local.until(sent.length);
    const before = await sourceRows();
    // Twenty at once: they commit in any order, yet none is lost or sent twice.
    const burst = Array.from({ length: 20 }, () => body());
    await Promise.all(burst.map((text) => deliver(production.url, text)));
    await local.until(sent.length + burst.length);
    await forward.waitFor('out', new RegExp(`id=${sent.length + burst.length}\\b`));
    forward.child.kill('SIGINT');
    expect(await forward.exit()).toBe(0);

    expect(local.received.slice(0, sent.length).map((r) => r.body)).toEqual(sent);
    expect(local.received.map((r) => r.body).sort()).toEqual([...sent, ...burst].sort());
    expect(local.received.every((r) => r.outcome === 'processed')).toBe(true);
    expect(forward.out).toHaveLength(24);
    expect(forward.out[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} {2}id=1 {2}app:create {2}app=alpha {2}200 processed {2}\d+ ms$/);
    expect(forward.out[2]).toMatch(/ {2}id=3 {2}app:budget:cap {2}app=beta {2}200 processed {2}\d+ ms$/);
    expect(forward.err.at(-1)).toBe('rack-webhooks inbox forward: forwarded 24 deliveries, the last id 24; continue with --from-id 25');
    // Never a body, a signature or a key in the output.
    expect(forward.out.join('\n') + forward.err.join('\n')).not.toMatch(/café|v1=|production-key|local-development/);
    const after = await sourceRows();
    expect(after.deliveries.slice(0, sent.length)).toEqual(before.deliveries);
    expect(after.deliveries.every((row) => row['state'] === 'pending' && row['attempts'] === 0 && row['locked_by'] === null)).toBe(true);
    expect(after.attempts).toEqual([]);
  });

  it('forwards history with --from-id and --once, then resumes from the printed id; a re-send is answered duplicate', async () => {
    await fresh();
    const first = [body(), body(), body()];
    for (const text of first) await deliver(production.url, text);
    const before = await sourceRows();
    const once = startForward([...source(), '--to', local.url, '--key', LOCAL_KEY, '--from-id', '1', '--once']);
    expect(await once.exit()).toBe(0);
    expect(forwardedIds(once.out)).toEqual(['1', '2', '3']);
    expect(once.err.at(-1)).toMatch(/forwarded 3 deliveries, the last id 3; continue with --from-id 4$/);
    expect(await sourceRows()).toEqual(before);

    const later = [body(), body()];
    for (const text of later) await deliver(production.url, text);
    const resumed = startForward([...source(), '--to', local.url, '--key', LOCAL_KEY, '--from-id', '4', '--once']);
    expect(await resumed.exit()).toBe(0);
    expect(forwardedIds(resumed.out)).toEqual(['4', '5']);
    expect(local.received.map((r) => r.body)).toEqual([...first, ...later]);

    // At least once: sending id 3 again is the local receiver's duplicate, not a new event.
    const again = startForward([...source(), '--to', local.url, '--key', LOCAL_KEY, '--from-id', '3', '--once']);
    expect(await again.exit()).toBe(0);
    expect(again.out[0]).toMatch(/ {2}id=3 {2}app:budget:cap {2}app=alpha {2}200 duplicate {2}\d+ ms$/);
  });

  it('filters by --action (a prefix pattern), --app, --state; --since picks the rows stored since then', async () => {
    await fresh();
    const texts = [body('app:create', 'one'), body('app:budget:cap', 'one'), body('app:budget:cap', 'two'), body('release:promote', 'two')];
    for (const text of texts) await deliver(production.url, text);
    const run = async (...flags: string[]) => {
      const forward = startForward([...source(), '--to', local.url, '--key', LOCAL_KEY, '--once', ...flags]);
      expect(await forward.exit(), forward.err.join('\n')).toBe(0);
      return forwardedIds(forward.out);
    };
    expect(await run('--from-id', '1', '--action', 'app:budget:*')).toEqual(['2', '3']);
    expect(await run('--from-id', '1', '--app', 'two')).toEqual(['3', '4']);
    expect(await run('--from-id', '1', '--action', 'app:create', '--action', 'release:promote')).toEqual(['1', '4']);
    expect(await run('--from-id', '1', '--state', 'dead')).toEqual([]);
    expect(await run('--from-id', '2', '--state', 'pending,done', '--app', 'one')).toEqual(['2']);
    await db.query(`UPDATE ${table} SET received_at = now() - interval '3 days' WHERE id <= 2`); // stored long ago
    expect(await run('--since', '1d')).toEqual(['3', '4']);
    expect(await run('--since', '2020-01-01')).toEqual(['1', '2', '3', '4']);
    expect(await run('--since', new Date(Date.now() + 86_400_000).toISOString())).toEqual([]);
  });

  it('a local receiver that is down, then up: printed, retried with backoff, then delivered', async () => {
    await fresh();
    const port = Number(new URL(local.url).port);
    await local.close();
    await deliver(production.url, body());
    const forward = startForward([
      ...source(),
      '--to',
      `http://127.0.0.1:${port}/webhooks`,
      '--key',
      LOCAL_KEY,
      '--from-id',
      '1',
      '--once',
    ]);
    expect(await forward.waitFor('out', /retry 1 of 4 in 500 ms/)).toMatch(
      / {2}id=1 {2}app:budget:cap {2}app=alpha {2}error \(.*ECONNREFUSED.*\) {2}\d+ ms/,
    );
    local = await localReceiver({ port });
    expect(await forward.exit()).toBe(0);
    expect(forward.out.at(-1)).toMatch(/ {2}id=1 {2}app:budget:cap {2}app=alpha {2}200 processed {2}\d+ ms$/);
    expect(local.received).toHaveLength(1);
  });

  // In this process (the process boundary is the other tests'), with the four waits between
  // retries (500 ms to 4 s, 7.5 s in all) asked of setTimeout as printed, and cut to nothing.
  it('a local 5xx is given up after the retries and the stream goes on; a 401 is not retried; --stop-on-error stops', async () => {
    await fresh();
    const [broken, fine] = [body(), body()];
    await deliver(production.url, broken);
    await deliver(production.url, fine);
    const failing = await localReceiver({ failing: (text) => text === broken });
    const waits: number[] = [];
    const realSetTimeout = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, ms?: number, ...rest: unknown[]) => {
      if (ms === undefined || !RETRY_DELAYS_MS.includes(ms)) return realSetTimeout(callback, ms, ...rest);
      waits.push(ms);
      return realSetTimeout(callback, 0, ...rest);
    }) as typeof setTimeout);
    const goesOn = await cli('inbox', 'forward', ...source(), '--to', failing.url, '--key', LOCAL_KEY, '--from-id', '1', '--once');
    vi.mocked(globalThis.setTimeout).mockRestore();
    await failing.close();
    expect(goesOn.code).toBe(1);
    expect(waits).toEqual([500, 1000, 2000, 4000]);
    const out = goesOn.out.split('\n').slice(0, -1);
    expect(out).toHaveLength(6);
    expect(
      out
        .slice(0, 4)
        .map((line) =>
          / {2}id=1 {2}.* {2}503 handler_failed \(boom\) {2}\d+ ms {2}\(retry (\d) of 4 in ([\d.]+ m?s)\)$/.exec(line)?.slice(1),
        ),
    ).toEqual([
      ['1', '500 ms'],
      ['2', '1 s'],
      ['3', '2 s'],
      ['4', '4 s'],
    ]);
    expect(out[4]).toMatch(/ {2}id=1 {2}.* {2}503 handler_failed \(boom\) {2}\d+ ms {2}\(gave up after 5 attempts\)$/);
    expect(out[5]).toMatch(/ {2}id=2 {2}.* {2}200 processed {2}\d+ ms$/);
    expect(failing.received.map((r) => r.body)).toEqual([fine]);
    // The one given up is not counted as forwarded, and the resume point does not skip it (issue 38, point 7).
    expect(goesOn.err).toMatch(/forwarded 1 delivery, the last id 2; gave up on 1, the first id 1; continue with --from-id 1\n$/);

    const wrongKey = await forwardWithWrongKey();
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.out).toMatch(/^[^\n]* {2}id=1 {2}.* {2}401 signature_mismatch {2}\d+ ms {2}\(stopping: --stop-on-error\)\n$/);
    expect(wrongKey.err).toMatch(/forwarded no delivery; continue with --from-id 1\n$/);
    expect(local.received).toEqual([]);

    // Resumed where the first run said, the delivery given up reaches the receiver.
    const resumed = await cli('inbox', 'forward', ...source(), '--to', local.url, '--key', LOCAL_KEY, '--from-id', '1', '--once');
    expect(resumed.code, resumed.err).toBe(0);
    expect(local.received.map((r) => r.body)).toEqual([broken, fine]);
  });

  it('in this process (the CLI as a function): forwards with --once, retries nothing on a 401, stops with --stop-on-error', async () => {
    await fresh();
    const sent = [body(), body('app:create')];
    for (const text of sent) await deliver(production.url, text);
    const done = await cli('inbox', 'forward', ...source(), '--to', local.url, '--key', LOCAL_KEY, '--from-id', '1', '--once');
    expect(done.code, done.err).toBe(0);
    expect(forwardedIds(done.out.trim().split('\n'))).toEqual(['1', '2']);
    expect(done.err).toMatch(/forwarded 2 deliveries, the last id 2; continue with --from-id 3\n$/);
    expect(local.received.map((r) => r.body)).toEqual(sent);
    const wrongKey = await forwardWithWrongKey();
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.out).toMatch(/ {2}id=1 {2}.* {2}401 signature_mismatch {2}\d+ ms {2}\(stopping: --stop-on-error\)\n$/);
  });

  it('signs under --header-name; takes the key from RACK_WEBHOOK_SECRETS', async () => {
    await fresh();
    await local.close();
    local = await localReceiver({ headerName: 'Acme-Signature' });
    await deliver(production.url, body());
    const forward = startForward([...source(), '--to', local.url, '--header-name', 'Acme-Signature', '--from-id', '1', '--once'], {
      RACK_WEBHOOK_SECRETS: LOCAL_KEY,
    });
    expect(await forward.exit()).toBe(0);
    expect(local.received).toHaveLength(1);
  });

  it('runs under a read-only role, on one connection', async () => {
    await fresh();
    await deliver(production.url, body());
    const role = `${db.schema}_ro`;
    await db.query(`CREATE ROLE ${role} LOGIN`);
    try {
      await db.query(`GRANT USAGE ON SCHEMA ${db.schema} TO ${role}`);
      await db.query(`GRANT SELECT ON ${table} TO ${role}`);
      await db.query(`ALTER ROLE ${role} SET default_transaction_read_only = on`);
      const url = POSTGRES_URL.replace(/\/\/[^@/]*@/, `//${role}@`);
      const forward = startForward(['--database', url, '--table', table, '--to', local.url, '--key', LOCAL_KEY, '--since', '1h']);
      await forward.waitFor('out', / id=1 .* 200 processed /);
      const connections = await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1`, [role]);
      expect(connections).toEqual([{ n: 1 }]);
      await deliver(production.url, body());
      await forward.waitFor('out', / id=2 .* 200 processed /);
      forward.child.kill('SIGTERM');
      expect(await forward.exit()).toBe(0);
      expect(forward.err.join('\n')).not.toMatch(/LISTEN/);
    } finally {
      await db.query(`DROP OWNED BY ${role}`);
      await db.query(`DROP ROLE ${role}`);
    }
  });

  it('a connection lost while following: the resume line, then one line, exit 1', async () => {
    await fresh();
    await deliver(production.url, body());
    const forward = startForward([...source(), '--to', local.url, '--key', LOCAL_KEY, '--from-id', '1']);
    await forward.waitFor('out', / id=1 .* 200 processed /);
    const [terminated] = await db.query(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'rack-webhooks' AND query LIKE $1`,
      [`%${db.schema}%`],
    );
    expect(terminated).toEqual({ ok: true });
    expect(await forward.exit()).toBe(1);
    expect(forward.err.slice(-2)).toEqual([
      'rack-webhooks inbox forward: forwarded 1 delivery, the last id 1; continue with --from-id 2',
      expect.stringMatching(/^rack-webhooks inbox forward: cannot reach the database at 127\.0\.0\.1:5432: /),
    ]);
  });

  it('a table that is not there: one line, exit 1', async () => {
    const forward = startForward([
      '--database',
      POSTGRES_URL,
      '--table',
      `${db.schema}.missing`,
      '--to',
      'http://127.0.0.1:9/',
      '--key',
      LOCAL_KEY,
    ]);
    expect(await forward.exit()).toBe(1);
    expect(forward.out).toEqual([]);
    expect(forward.err).toEqual([
      `rack-webhooks inbox forward: the database has no inbox table ${db.schema}.missing (or an older schema of it): run rack-webhooks inbox migrate --database ${POSTGRES_URL} --table ${db.schema}.missing`,
    ]);
  });
});

describe('inbox forward on a PGlite directory', { timeout: 120_000 }, () => {
  it('forwards what the app that owns the directory stores, through that app, while it runs', async () => {
    const dir = pgliteDirectory(join(tempDir(), 'inbox'));
    const sent = [body(), body('app:create')];
    const app = await openPGlite(dir);
    expect(app.role).toBe('owner');
    const local = await localReceiver();
    try {
      const inbox = createInbox({ database: app });
      await inbox.migrate();
      const receiver = createReceiver({ secrets: PROD_KEY, inbox });
      for (const text of sent)
        expect((await receiver.receive(createSignedRequestSync(text, { secrets: PROD_KEY }))).outcome).toBe('accepted');
      const before = await inbox.list();
      const forward = startForward(['--database', dir, '--to', local.url, '--key', LOCAL_KEY, '--from-id', '1', '--once']);
      expect(await forward.exit(), forward.err.join('\n')).toBe(0);
      expect(forwardedIds(forward.out)).toEqual(['1', '2']);
      expect(local.received.map((r) => r.body)).toEqual(sent);
      expect(await inbox.list()).toEqual(before); // read-only on the app's rows
    } finally {
      await local.close();
      await app.close();
    }
  });
});

describe('inbox forward usage', () => {
  const usage = async (pattern: RegExp, ...args: string[]) => {
    const result = await cli('inbox', 'forward', ...args);
    expect(result.code, result.err).toBe(2);
    expect(result.out).toBe('');
    expect(result.err.split('\n')).toHaveLength(2);
    expect(result.err).toMatch(pattern);
  };
  const base = ['--database', POSTGRES_URL, '--key', LOCAL_KEY];

  it('bad flags give one line and exit 2, before any database is opened', async () => {
    await usage(/^rack-webhooks inbox forward: no receiver: pass --to http:\/\/localhost:3000\/webhooks\n$/, ...base);
    await usage(/--to must be an http:\/\/ or https:\/\/ URL, but it is a "ftp:" URL/, ...base, '--to', 'ftp://x/y');
    await usage(/--to must be an http:\/\/ or https:\/\/ URL, but it is not a URL/, ...base, '--to', 'not a url');
    const to = ['--to', 'http://127.0.0.1:3000/webhooks'];
    await usage(/no key: pass --key, --key-file, or set RACK_WEBHOOK_SECRETS/, '--database', POSTGRES_URL, ...to);
    await usage(/no database: pass --database/, '--key', LOCAL_KEY, ...to);
    await usage(/pass --since or --from-id, not both/, ...base, ...to, '--since', '1h', '--from-id', '3');
    await usage(/--once forwards history: say from where with --since T or --from-id N/, ...base, ...to, '--once');
    await usage(/--from-id must be a delivery id, a positive whole number/, ...base, ...to, '--from-id', '0');
    await usage(/--from-id must be a delivery id/, ...base, ...to, '--from-id', '99999999999999999999');
    await usage(
      /--since must be a date \(2026-11-23\), an RFC 3339 time or an age such as 30d, got "yesterday"/,
      ...base,
      ...to,
      '--since',
      'yesterday',
    );
    await usage(/--state must be one of pending, running, done, dead, ignored, duplicate, got "gone"/, ...base, ...to, '--state', 'gone');
    await usage(/--action must be an action or a prefix pattern ending in :\*/, ...base, ...to, '--action', 'app*');
    await usage(/--header-name must be an HTTP header name/, ...base, ...to, '--header-name', 'Bad Name');
    await usage(/unknown flag --from; see --help/, ...base, ...to, '--from', '1h');
    await usage(/at most 4 keys/, ...base, ...to, '--key', 'a,b,c,d');
  });
});
