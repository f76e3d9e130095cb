// The image, without a container runtime (issue 38, point 6): deploy/Dockerfile's CMD is run with
// the image's ENV, from the repository root against the built package, with only a secret, the test
// PostgreSQL and a table of its own added, then probed on the paths the Kubernetes manifest and the
// compose file probe. PORT is the one variable replaced: parallel runs on this machine cannot all
// bind the image's 3000 (manifests.test.ts checks that EXPOSE, PORT and the manifests' ports agree).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { assertBuilt, deliveryHeaders, fixture, newKey, ROOT, signature } from '../examples/helpers.js';
import { openDatabase, POSTGRES_URL, type TestDatabase } from '../inbox/databases.js';
import { compose, composeSeconds, container, image, kubernetes, preStopSeconds, read } from './deploy-files.js';

const FIRED = fixture('app.budget.auto-shutdown.fired');
const CAP = fixture('app.budget.cap');

/** What a platform gives the process after SIGTERM before SIGKILL: the tighter of the two deploy files. */
function graceAfterSigtermMs(): number {
  const manifest = kubernetes();
  const kubernetesSeconds = manifest['Deployment'].spec.template.spec.terminationGracePeriodSeconds - preStopSeconds(manifest);
  return Math.min(kubernetesSeconds, composeSeconds(compose().services.inbox.stop_grace_period)) * 1000;
}

/**
 * An address other than 127.0.0.1: the kubelet and other containers reach the app at the pod's
 * address, so an app bound to loopback alone fails every probe there. 127.0.0.2 stands for it: Linux
 * routes all of 127/8 to loopback, but a socket bound to 127.0.0.1 does not accept it. (Never the
 * machine's own network address: tests here send traffic to loopback only.)
 */
function podAddress(): string {
  return '127.0.0.2';
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '0.0.0.0', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface RunningImage {
  origin: string;
  output: () => string;
  /** Polls `check` until it holds; fails at once, with the output, if the process exits first. */
  until: (check: () => Promise<boolean>, what: string, timeoutMs?: number) => Promise<void>;
  signal: (name: NodeJS.Signals) => void;
  /** Resolves when the process exits; SIGKILL after `killAfterMs`, as the platform would. */
  exited: (killAfterMs: number) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

let child: ChildProcess | undefined;
let database: TestDatabase<'pg'> | undefined;
afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
  child = undefined;
  await database?.close();
  database = undefined;
});

/** The Dockerfile's CMD with its ENV (and `extra`), from the repository root; PATH only from here. */
async function runImage(extra: Record<string, string>): Promise<RunningImage> {
  assertBuilt();
  const { cmd, env } = image();
  expect(cmd?.[0]).toBe('node');
  const port = await freePort();
  const started = spawn(process.execPath, cmd!.slice(1), {
    cwd: ROOT,
    env: { PATH: process.env['PATH'], ...env, ...extra, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = started;
  let output = '';
  started.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  started.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    started.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    origin: `http://127.0.0.1:${port}`,
    output: () => output,
    until: (check, what, timeoutMs = 120_000) =>
      Promise.race([
        vi.waitFor(async () => expect(await check().catch(() => false), what).toBe(true), { timeout: timeoutMs, interval: 100 }),
        exit.then(({ code, signal }) => {
          throw new Error(`the image's command exited (code ${code}, signal ${signal}) before ${what}:\n${output}`);
        }),
      ]),
    signal: (name) => started.kill(name),
    exited: async (killAfterMs) => {
      const timer = setTimeout(() => started.kill('SIGKILL'), killAfterMs);
      try {
        return await exit;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

const deliver = (origin: string, body: string, key: string) =>
  fetch(`${origin}/webhooks`, { method: 'POST', headers: deliveryHeaders(signature(body, key)), body });

async function rows(db: TestDatabase<'pg'>): Promise<string[]> {
  return (await db.query<{ action: string }>(`SELECT action FROM ${db.table} ORDER BY id`)).map((row) => row.action);
}

describe("deploy/Dockerfile's command and environment", () => {
  it(
    'answers the start-up and liveness paths on its port and on a non-loopback address, commits a signed delivery to DATABASE_URL, and exits 0 on SIGTERM within the grace period',
    { timeout: 300_000 },
    async () => {
      database = await openDatabase('pg');
      const key = newKey();
      const app = await runImage({ RACK_WEBHOOK_SECRETS: key, DATABASE_URL: POSTGRES_URL, INBOX_TABLE: database.table });
      const main = container();
      await app.until(async () => (await fetch(`${app.origin}${main.startupProbe.httpGet.path}`)).status === 200, 'the start-up probe');
      expect((await fetch(`${app.origin}${main.livenessProbe.httpGet.path}`)).status).toBe(200);
      // HOST=0.0.0.0: the probes come to the pod's address, not to loopback.
      const probed = new URL(app.origin);
      probed.hostname = podAddress();
      expect((await fetch(`${probed.origin}${main.livenessProbe.httpGet.path}`)).status).toBe(200);

      const response = await deliver(app.origin, FIRED.body, key);
      expect([response.status, await response.json()]).toEqual([200, { status: 'accepted' }]);
      expect(await rows(database)).toEqual(['app:budget:auto-shutdown:fired']);

      app.signal('SIGTERM');
      expect(await app.exited(graceAfterSigtermMs())).toEqual({ code: 0, signal: null });
      expect(app.output()).not.toContain(key);
    },
  );
});

// The shutdown contract (readiness 503 from SIGTERM on, deliveries still taken for SHUTDOWN_DRAIN_MS
// with `Connection: close`) comes with the shutdown work on examples/express-inbox.mjs: until the
// example reads SHUTDOWN_DRAIN_MS, these are skipped, by name.
const servesShutdownContract = read('examples/express-inbox.mjs').includes('SHUTDOWN_DRAIN_MS');

describe.skipIf(!servesShutdownContract)("deploy/Dockerfile's command: readiness and the drain (needs the example's shutdown)", () => {
  it(
    'answers the readiness path 200, then 503 from SIGTERM on while it still commits deliveries with Connection: close, then exits 0',
    { timeout: 300_000 },
    async () => {
      database = await openDatabase('pg');
      const key = newKey();
      // A drain longer than the image's 5 s, so a loaded machine still posts within it; the grace follows.
      const drainMs = 15_000;
      const app = await runImage({
        RACK_WEBHOOK_SECRETS: key,
        DATABASE_URL: POSTGRES_URL,
        INBOX_TABLE: database.table,
        SHUTDOWN_DRAIN_MS: String(drainMs),
      });
      const readiness = `${app.origin}${container().readinessProbe.httpGet.path}`;
      await app.until(async () => (await fetch(readiness)).status === 200, 'the readiness probe');
      const ready = await deliver(app.origin, FIRED.body, key);
      expect([ready.status, await ready.json()]).toEqual([200, { status: 'accepted' }]);

      app.signal('SIGTERM');
      await app.until(async () => (await fetch(readiness)).status === 503, 'readiness 503 after SIGTERM', 10_000);
      const draining = await deliver(app.origin, CAP.body, key);
      expect([draining.status, await draining.json(), draining.headers.get('connection')]).toEqual([200, { status: 'accepted' }, 'close']);

      const imageDrainMs = Number(image().env['SHUTDOWN_DRAIN_MS'] ?? 5000);
      expect(await app.exited(graceAfterSigtermMs() + drainMs - imageDrainMs)).toEqual({ code: 0, signal: null });
      expect(await rows(database)).toEqual(['app:budget:auto-shutdown:fired', 'app:budget:cap']);
    },
  );

  it('reads every variable the deploy files set', () => {
    const source = read('examples/express-inbox.mjs');
    const set = new Set([
      ...Object.keys(image().env),
      ...Object.keys(compose().services.inbox.environment),
      ...(container().env as { name: string }[]).map((variable) => variable.name),
    ]);
    set.delete('NODE_ENV'); // Express reads it
    for (const name of set) expect(source, name).toMatch(new RegExp(`\\b${name}\\b`));
  });
});
