/**
 * An app that is the guest of a PGlite directory outlives its owner (issue 38, point 4): started
 * beside the console, examples/express-inbox.mjs (default options) becomes the console's guest;
 * the console stops while deliveries stream, and the app takes the directory over, answering every
 * one 200 with its row stored once. A guest app whose owner app is SIGKILLed does the same. All
 * real processes on the built package (npx tsup first).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSignedRequestSync } from '../../src/testing/signed-request.js';
import { killConsoles, startConsoleProcess } from '../console/console-process.js';
import { fixture, post, signature, startExample, stopAllExamples } from '../examples/helpers.js';
import { killAllChildren, startChild, waitFor } from '../inbox/fixtures/children.js';
import { pgliteDirectory } from '../kit/pglite-directory.js';
import { killChildren, removeTempDirs, run, tempDir } from './helpers.js';
import { KEY, captureOutput, cli } from './inbox-helpers.js';

captureOutput();
afterEach(async () => {
  killChildren();
  killConsoles();
  await stopAllExamples();
  await killAllChildren();
});
afterAll(removeTempDirs);

const sockets = (dir: string) => readdirSync(dir).filter((name) => /^\.s\.PGSQL\.\d+$/.test(name));
const FIRED = fixture('app.budget.auto-shutdown.fired');
const firedFor = (app: string) => JSON.stringify({ ...FIRED.event, data: { ...FIRED.event.data, app } });

/** `inbox stats` through whoever owns the directory now: state -> count. */
async function stats(dir: string): Promise<Record<string, number>> {
  const result = await run(['inbox', 'stats', '--database', dir], { timeoutMs: 120_000 });
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return Object.fromEntries([...result.stdout.matchAll(/^(pending|running|done|dead|ignored) +(\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
}

describe('a guest app outlives its PGlite directory’s owner', () => {
  it('the console owns the directory, the example app (default options) is its guest; the console stops mid-stream: every delivery 200, stored once, handled', async () => {
    const dir = pgliteDirectory(join(tempDir(), 'inbox-data'));
    expect(await cli('inbox', 'migrate', '--database', dir)).toMatchObject({ code: 0, err: '' });
    const consoleProcess = await startConsoleProcess(['--database', dir], 120_000);
    const key = 'handover-test-key';
    const app = await startExample('express-inbox.mjs', { RACK_WEBHOOK_SECRETS: key, INBOX_DIR: dir }, 240_000);
    expect(app.stdout()).toContain(`inbox on PGlite in ${dir} (guest), worker running`);
    const statuses: number[] = [];
    const timings: number[] = [];
    let consoleStopped: Promise<number | null> | undefined;
    for (let i = 0; i < 30; i++) {
      const body = firedFor(`app-${i}`);
      const sentAt = Date.now();
      statuses.push((await post(app.url, body, signature(body, key))).status);
      timings.push(Date.now() - sentAt);
      if (i === 5) consoleStopped = consoleProcess.stop('SIGINT'); // Ctrl-C, as a user stops it
    }
    expect(statuses, `answer times (ms): ${timings.join(' ')}\n${app.stdout()}\n${app.stderr()}`).toEqual(Array(30).fill(200));
    expect(await consoleStopped).toBe(0);
    await waitFor(
      () => Array.from({ length: 30 }, (_, i) => app.stdout().includes(` app=app-${i} `)).every(Boolean),
      120_000,
      () => `the app's handler to run all 30 deliveries\n${app.stdout()}\n${app.stderr()}`,
    );
    expect(sockets(dir)).toHaveLength(1); // the app's: it owns the directory now
    expect(await stats(dir)).toMatchObject({ pending: 0, running: 0, done: 30, dead: 0 });
    expect(await app.stop(60_000)).toEqual({ code: 0, signal: null });
    // What the handover cut (a claim, a completion) is logged and retried: never a delivery refused.
    expect(app.stderr()).not.toMatch(/rejected|inbox_unavailable \(inbox_unavailable\): receive/);
    expect(sockets(dir)).toEqual([]);
  }, 600_000);

  it('a guest app whose owner app is SIGKILLed takes the directory over: every delivery 200 and processed, none lost', async () => {
    const dir = pgliteDirectory(join(tempDir(), 'inbox-data'));
    const owner = startChild('pglite-app.mjs', { RWT_PGLITE_DIR: dir, RWT_SECRET: KEY, RWT_MAX_ATTEMPTS: '3' });
    expect(await owner.message('role', 120_000)).toBe('owner');
    await owner.message('port', 120_000);
    // A delivery the owner was running when killed counts a crashed attempt (the rule for a handler
    // that kills its worker): with one attempt it would go dead, not be lost; with three it is done.
    const guest = startChild('pglite-app.mjs', { RWT_PGLITE_DIR: dir, RWT_SECRET: KEY, RWT_MAX_ATTEMPTS: '3' });
    expect(await guest.message('role', 120_000)).toBe('guest');
    const port = (await guest.message('port', 120_000)) as number;
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const body = `{"action":"app:create","status":"success","timestamp":"2026-01-10T00:00:00Z","data":{"name":"app-${i}","rack":"r","actor":"x"}}`;
      const request = createSignedRequestSync(body, { secrets: KEY });
      const response = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers: request.headers, body: request.body });
      statuses.push(response.status);
      await response.text();
      if (i === 5) {
        owner.process.kill('SIGKILL');
        // Refused while its owner is gone: counted in the guest, written once it holds the database.
        const forged = createSignedRequestSync(body, { secrets: 'not-the-key' });
        const refused = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers: forged.headers, body: forged.body });
        expect(refused.status).toBe(401);
        await refused.text();
      }
    }
    expect(statuses).toEqual(Array(20).fill(200));
    expect(await owner.exited).toMatchObject({ signal: 'SIGKILL' });
    // Every delivery the guest took is handled, by the guest's worker or (before the kill) the owner's.
    await waitFor(
      async () => (await stats(dir)).done === 20,
      120_000,
      () => `20 deliveries done\n${guest.output()}`,
    );
    expect(sockets(dir)).toHaveLength(1);
    await waitFor(
      async () =>
        (await run(['inbox', 'stats', '--database', dir], { timeoutMs: 120_000 })).stdout.includes(
          'refused (last hour): 1: signature_mismatch 1\n',
        ),
      120_000,
      () => `the guest's refusal counted in inbox stats\n${guest.output()}`,
      500,
    );
  }, 600_000);
});
