/**
 * A PGlite guest whose owner is alive and answers nothing (SIGSTOP: its socket still accepts, so no
 * takeover can help) must not look healthy (issue 38, point 4): the app's /readyz, an in-process
 * inbox.health() and healthHandler, and `rack-webhooks inbox health` all fail within a bound with
 * `pglite_owner_unreachable` and the owner's pid; once the owner answers again the guest recovers,
 * and what it refused meanwhile shows in `inbox stats`. Real processes on the built package
 * (npx tsup first): the owner app, examples/express-inbox.mjs as its guest, the CLI.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createInbox, healthHandler, openPGlite, type PGliteDirectory } from '../../src/inbox.js';
import { createSignedRequestSync } from '../../src/testing/signed-request.js';
import { startExample, stopAllExamples } from '../examples/helpers.js';
import { killAllChildren, startChild, type Child } from '../inbox/fixtures/children.js';
import { pgliteDirectory } from '../kit/pglite-directory.js';
import { until } from '../kit/time.js';
import { killChildren, removeTempDirs, run, tempDir } from './helpers.js';
import { KEY, captureOutput, cli } from './inbox-helpers.js';

captureOutput();
let owner: Child | undefined;
let guest: PGliteDirectory | undefined;
afterEach(async () => {
  owner?.process.kill('SIGCONT'); // a stopped owner would keep its guests waiting through the clean-up
  await guest?.close();
  killChildren();
  await stopAllExamples();
  await killAllChildren();
});
afterAll(removeTempDirs);

/** What a probe of the app answers, bounded: a probe that hangs is a failure too. */
async function probe(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(40_000) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** `work`'s value and how long it took; past 90 s it fails (a check that hangs is the defect itself). */
async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const startedAt = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no answer within 90 s')), 90_000)));
  try {
    return { value: await Promise.race([work, bound]), ms: Date.now() - startedAt };
  } finally {
    clearTimeout(timer);
  }
}

describe('a PGlite guest cut off from a live owner', () => {
  it('fails its checks with pglite_owner_unreachable and the owner’s pid within a bound, recovers once the owner answers, and counts what it refused', async () => {
    const dir = pgliteDirectory(join(tempDir(), 'inbox-data'));
    expect(await cli('inbox', 'migrate', '--database', dir)).toMatchObject({ code: 0, err: '' });
    owner = startChild('pglite-app.mjs', { RWT_PGLITE_DIR: dir, RWT_SECRET: KEY });
    expect(await owner.message('role', 120_000)).toBe('owner');
    await owner.message('port', 120_000);
    const pid = owner.process.pid!;
    // The owner names itself beside its socket, as PostgreSQL's .s.PGSQL.<port>.lock does.
    expect(readFileSync(join(dir, '.s.PGSQL.1.lock'), 'utf8')).toBe(`${pid}\nopen\n`);

    const key = 'cut-off-test-key';
    const app = await startExample('express-inbox.mjs', { RACK_WEBHOOK_SECRETS: key, INBOX_DIR: dir }, 240_000);
    expect(app.stdout()).toContain(`inbox on PGlite in ${dir} (guest), worker running`);
    guest = await openPGlite(dir);
    expect(guest.role).toBe('guest');
    const inbox = createInbox({ database: guest });
    // The owner check's reason is what this asserts: it comes in about 10 s, up to 30 s on a loaded machine,
    // so readiness's own bound (15 s by default, tested in test/inbox/health-handler-stalled.test.ts) waits past it.
    const probes = healthHandler(inbox, { cacheMs: 0, logger: false, detail: true, readyTimeoutMs: 60_000 });
    expect((await inbox.health()).database.reachable).toBe(true); // a connection in the pool, idle: the next statement goes there
    expect((await probe(`${app.origin}/readyz`)).status).toBe(200);

    owner.process.kill('SIGSTOP');
    const unreachable = new RegExp(`pglite_owner_unreachable: .*pid ${pid}\\b`);
    const [health, ready, cliHealth, appReady, forged] = await Promise.all([
      timed(inbox.health()),
      timed(probes.ready().then(async (response) => ({ status: response.status, body: await response.json() }))),
      timed(run(['inbox', 'health', '--database', dir], { timeoutMs: 90_000 })),
      timed(
        // The app's readiness answers from before the owner stopped for as long as its 1 s cache
        // holds: probe as a balancer would, every 200 ms, until it answers otherwise (bounded).
        until(
          async () => {
            const answer = await probe(`${app.origin}/readyz`);
            expect(answer.status, 'the app still ready 60 s after its owner stopped').not.toBe(200);
            return answer;
          },
          60_000,
          200,
        ),
      ),
      (async () => {
        const request = createSignedRequestSync('{"action":"app:create"}', { secrets: 'not-the-key' });
        const response = await fetch(`${app.origin}/webhooks`, { method: 'POST', headers: request.headers, body: request.body });
        await response.text();
        return response.status;
      })(),
    ]);
    const figures = `in-process health ${health.ms} ms, handler ${ready.ms} ms, CLI ${cliHealth.ms} ms, app /readyz ${appReady.ms} ms`;
    console.log(`owner SIGSTOPped: ${figures}`);

    expect(health.value).toMatchObject({ status: 'unreachable', ok: false, database: { reachable: false } });
    expect(health.value.checks.database).toBe('failing');
    expect(health.value.reasons[0]).toMatch(unreachable);
    expect(ready.value.status).toBe(503);
    expect(ready.value.body).toMatchObject({ status: 'not_ready', checks: { database: 'failing' } });
    expect(JSON.stringify(ready.value.body)).toMatch(unreachable);
    expect(appReady.value).toMatchObject({ status: 503, body: { status: 'not_ready', checks: { database: 'failing' } } });
    // The CLI: exit 2 (could not check), its status and one line that says why and what to do.
    expect(cliHealth.value.code, cliHealth.value.stderr).toBe(2);
    expect(cliHealth.value.stderr).toBe('');
    const lines = cliHealth.value.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('status: unreachable');
    expect(lines[1]).toMatch(unreachable);
    expect(lines[1]).toContain(`kill -CONT ${pid}`);
    // Bounded: two unanswered questions of 5 s each, or a statement's 5 s wait and one question (the machine is loaded).
    for (const { ms } of [health, ready, cliHealth]) expect(ms, figures).toBeLessThan(30_000);
    expect(forged).toBe(401);

    owner.process.kill('SIGCONT');
    await vi.waitFor(async () => expect((await inbox.health()).database.reachable).toBe(true), { timeout: 60_000, interval: 200 });
    await vi.waitFor(async () => expect((await probe(`${app.origin}/readyz`)).status).toBe(200), { timeout: 60_000, interval: 200 });
    // The refusal counted while the database was away is written once it answers (every ~5 s).
    await vi.waitFor(
      async () =>
        expect((await run(['inbox', 'stats', '--database', dir], { timeoutMs: 60_000 })).stdout).toContain(
          'refused (last hour): 1: signature_mismatch 1\n',
        ),
      { timeout: 60_000, interval: 500 },
    );
    const report = await inbox.health();
    expect(report.refusalsLastHour).toEqual({ total: 1, byCode: [{ code: 'signature_mismatch', count: 1 }] });
    expect(report.checks.refusals).toBe('warning');

    expect(await app.stop(60_000)).toEqual({ code: 0, signal: null });
    await guest.close();
    owner.process.kill('SIGTERM');
    expect(await owner.message('closed', 60_000)).toBe(true);
    expect(existsSync(join(dir, '.s.PGSQL.1.lock'))).toBe(false); // given up with the socket
  }, 600_000);
});
