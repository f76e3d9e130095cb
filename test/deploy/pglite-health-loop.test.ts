/**
 * Issue 38, point 4: "`inbox health` run in a loop beside app restarts: 6 of 41 app starts never
 * listened within 10 to 30 s; one waited 60 s on a CLI owner that held the directory, then
 * crashed." Measured again with real processes on the built package (npx tsup first):
 * `rack-webhooks inbox health --database <dir>` runs back to back as separate processes while
 * examples/express-inbox.mjs on the same PGlite directory is started and stopped (SIGTERM) again
 * and again, so that the app starts as the owner, as the guest of a CLI run that owns the
 * directory, or while one hands it over. Every start must answer /readyz 200 within a bound, and
 * every CLI run exit within a bound with a documented code (0, 1, 2), never a crash.
 *
 * It found and passes the three start-up failures fixed beside it (EPIPE, ECONNRESET mid-migrate, a
 * taken-over guest's driver). One finding is unexplained: once, on this loaded machine, an app that
 * owned the directory printed its listening line and its /readyz then did not answer 200 for 60 s
 * while a 36 s `inbox health` run was its guest, with nothing logged (healthHandler logs the first
 * verdict that is not ok, so no readiness check ended: a query stuck, or an event loop that did not
 * turn). Not seen again in 44 starts and 94 CLI runs at load 2 to 16, 16 of the starts with timing
 * logs in the owner (no owner query, guest hold of PGlite or event-loop stall over 1.5 s). Should it
 * come back, the failure names each /readyz outcome beside /healthz's, which never touches the
 * database, to tell the two apart (a start of 53 s was seen at load 13 to 16: the 60 s may have been
 * load alone). A stuck readiness query now answers 503 not_ready with `database` failing after
 * healthHandler's readyTimeoutMs (15 s) instead of no answer. Six restarts: 110 to 195 s at load 10 to 16.
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { run, killChildren, removeTempDirs, tempDir, type RunResult } from '../cli/helpers.js';
import { newKey, startExample, stopAllExamples } from '../examples/helpers.js';
import { pgliteDirectory } from '../kit/pglite-directory.js';
import { until } from '../kit/time.js';

afterEach(async () => {
  killChildren();
  await stopAllExamples();
});
afterAll(removeTempDirs);

const APP_STARTS = 6;
/**
 * From spawn to /readyz 200. The worst start waits for a CLI run that owns the directory to load
 * PGlite, then for its close, then loads PGlite itself: 5 to 20 s each on this loaded 2-core machine
 * (the slowest start seen took 53 s, at load 13 to 16 beside a 29 s CLI run).
 */
const START_BOUND_MS = 90_000;
/** One `inbox health` run, owner (loading PGlite) or guest. */
const CLI_BOUND_MS = 45_000;

interface CliRun extends RunResult {
  readonly startedAt: number;
  readonly ms: number;
}

/** The CLI runs around `since`, for a failure's message. */
const runsSince = (runs: readonly CliRun[], since: number) =>
  runs
    .filter((result) => result.startedAt + result.ms >= since)
    .map(
      (result) =>
        `  +${result.startedAt - since} ms, ${result.ms} ms, exit ${result.code}: ${result.stdout.split('\n')[0]} ${result.stderr}`,
    )
    .join('\n');

const probe = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
    async (response) => `${response.status} ${await response.text()}`,
    (error: Error) => `no answer (${error.name})`,
  );

/** /readyz until 200 (each probe bounded), or the bound passes; the probes' outcomes, for a failure's message. */
async function readyWithin(origin: string, boundMs: number, startedAt: number): Promise<{ ready: boolean; probes: string }> {
  const seen = new Map<string, number>();
  try {
    await until(
      async () => {
        const readyz = await probe(`${origin}/readyz`);
        if (readyz.startsWith('200 ')) return;
        // Liveness never touches the database: it tells a readiness query stuck from an event loop that does not turn.
        const outcome = `/readyz ${readyz}, /healthz ${await probe(`${origin}/healthz`)}`;
        seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
        throw new Error(outcome);
      },
      Math.max(1, boundMs - (Date.now() - startedAt)),
      100,
    );
    return { ready: true, probes: '' };
  } catch {
    return { ready: false, probes: [...seen].map(([outcome, count]) => `${count} x ${outcome}`).join('; ') };
  }
}

describe('inbox health in a loop beside app restarts on one PGlite directory', () => {
  it(
    'every app start answers /readyz 200 within a bound; every CLI run exits within a bound with 0, 1 or 2',
    { timeout: 600_000 },
    async () => {
      const dir = pgliteDirectory(join(tempDir(), 'inbox-data'));
      expect(await run(['inbox', 'migrate', '--database', dir], { timeoutMs: 120_000 })).toMatchObject({ code: 0 }); // as a deploy does first
      const key = newKey();
      const runs: CliRun[] = [];
      let looping = true;
      const loop = (async () => {
        while (looping) {
          const startedAt = Date.now();
          const result = await run(['inbox', 'health', '--database', dir], { timeoutMs: CLI_BOUND_MS * 2 }).catch(
            (error: Error): RunResult => ({ code: null, stdout: '', stderr: error.message }),
          );
          runs.push({ ...result, startedAt, ms: Date.now() - startedAt });
        }
      })();
      const starts: { ms: number; ready: boolean; role: string }[] = [];
      try {
        for (let i = 0; i < APP_STARTS; i++) {
          const startedAt = Date.now();
          const app = await startExample(
            'express-inbox.mjs',
            { RACK_WEBHOOK_SECRETS: key, INBOX_DIR: dir, SHUTDOWN_DRAIN_MS: '0' },
            START_BOUND_MS,
          ).catch((error: Error) => {
            throw new Error(`start ${i + 1}: ${error.message}\nCLI runs since:\n${runsSince(runs, startedAt)}`);
          });
          const { ready, probes } = await readyWithin(app.origin, START_BOUND_MS, startedAt);
          starts.push({ ms: Date.now() - startedAt, ready, role: /\((owner|guest)\), worker running/.exec(app.stdout())?.[1] ?? '?' });
          expect(
            ready,
            `start ${i + 1}: /readyz never 200 (${probes})\n${app.stdout()}\n${app.stderr()}\n${runsSince(runs, startedAt)}`,
          ).toBe(true);
          // Let a CLI run overlap the running app before it stops (each run is bounded by its timeout).
          const seen = runs.length;
          await until(() => expect(runs.length).toBeGreaterThan(seen), CLI_BOUND_MS * 2, 50);
          expect(await app.stop(30_000), `${app.stdout()}\n${app.stderr()}`).toEqual({ code: 0, signal: null });
        }
      } finally {
        looping = false;
        await loop;
      }
      const codes = [...new Set(runs.map((result) => result.code))].sort();
      const figures = {
        appStarts: starts.length,
        listened: starts.filter((start) => start.ready).length,
        slowestStartMs: Math.max(...starts.map((start) => start.ms)),
        roles: starts.map((start) => start.role).join(','),
        cliRuns: runs.length,
        slowestCliMs: Math.max(...runs.map((result) => result.ms)),
        exitCodes: Object.fromEntries(codes.map((code) => [String(code), runs.filter((result) => result.code === code).length])),
      };
      console.info(`inbox health loop beside app restarts: ${JSON.stringify(figures)}`);
      const odd = runs.filter(
        (result) => ![0, 1, 2].includes(result.code!) || /\n\s+at |Error:/.test(result.stderr) || result.ms > CLI_BOUND_MS,
      );
      expect(odd.slice(0, 3)).toEqual([]);
      expect(figures.listened).toBe(APP_STARTS);
      expect(runs.length).toBeGreaterThanOrEqual(APP_STARTS);
    },
  );
});
