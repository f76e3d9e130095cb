/**
 * Issue 38, point 3: one instance restarted in place refuses nothing. examples/supervisor.mjs runs
 * examples/express-inbox.mjs as a node:cluster worker and replaces it on SIGHUP (the new worker
 * listens before the old one drains and closes); the "rack" sends 100 signed deliveries a second
 * straight to the port, each once, on keep-alive connections, through two replacements. Every
 * delivery must be answered 2xx and every 2xx be a row. Node 20 and later.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, POSTGRES_URL, type TestDatabase } from '../inbox/databases.js';
import { newKey, startExample, stopAllExamples } from '../examples/helpers.js';
import { waitFor } from '../kit/time.js';
import { finishAndTally, hundredMore, Sender } from './sender.js';

let database: TestDatabase<'pg'> | undefined;
afterEach(async () => {
  await stopAllExamples();
  await database?.close();
  database = undefined;
});

const replaced = (stdout: string) => stdout.split('\n').filter((line) => /^\[supervisor\] worker \d+ replaced by \d+/.test(line)).length;

describe('an in-place restart under examples/supervisor.mjs (node:cluster)', () => {
  it('answers every delivery 2xx and stores every 2xx through two replacements of the worker', { timeout: 180_000 }, async () => {
    database = await openDatabase('pg');
    const key = newKey();
    const env = { RACK_WEBHOOK_SECRETS: key, DATABASE_URL: POSTGRES_URL, INBOX_TABLE: database.table, SHUTDOWN_DRAIN_MS: '500' };
    const supervisor = await startExample('supervisor.mjs', env, 60_000);
    const sender = new Sender(new URL(supervisor.url), key, 100);
    sender.start();
    for (const round of [1, 2]) {
      await hundredMore(sender);
      supervisor.kill('SIGHUP');
      await waitFor(
        () => replaced(supervisor.stdout()) === round,
        60_000,
        () => `replacement ${round} did not finish:\n${supervisor.stdout()}\n${supervisor.stderr()}`,
      );
    }
    const { outcomes, rows, figures } = await finishAndTally(sender, database);
    console.info(`in-place restart (supervisor, ${process.version}): ${JSON.stringify(figures)}`);
    expect(outcomes.filter((outcome) => outcome.status !== 200).slice(0, 5)).toEqual([]);
    expect(figures).toMatchObject({ refusedOrReset: 0, otherStatus: 0, okNotStored: 0 });
    expect(figures.answered2xx).toBe(figures.sent);
    expect(figures.sent).toBeGreaterThanOrEqual(300);
    expect(rows).toHaveLength(figures.sent);

    expect(await supervisor.stop(60_000)).toEqual({ code: 0, signal: null });
    // Three workers served in turn, each one's shutdown done.
    expect(supervisor.stdout().match(/^\[shutdown\] done in \d+ ms$/gm)).toHaveLength(3);
    expect(supervisor.stderr()).toBe('');
  });
});
