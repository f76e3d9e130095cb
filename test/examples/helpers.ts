// Shared by the tests of examples/: run an example as a user would (`node examples/<file>`), sign
// deliveries independently of the SDK (straight from the spec), and record what notifiers post.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The examples import the built package (`rack-webhooks` resolves to dist/ by self-reference). */
export function assertBuilt(): void {
  const missing = ['index', 'express', 'fastify', 'node', 'web'].filter((entry) => !existsSync(`${ROOT}dist/${entry}.js`));
  if (missing.length > 0) {
    throw new Error(
      `dist/ is not built (missing ${missing.join(', ')}): the examples import the built package. Run \`npx tsup\` (npm run build) first.`,
    );
  }
}

/** A key as the spec recommends: 32 random bytes, hex. */
export const newKey = (): string => randomBytes(32).toString('hex');

export interface Fixture {
  action: string;
  status: string;
  timestamp: string;
  data: Record<string, string>;
}

/** A fixture's event, and its body as the rack sends it (compact JSON). */
export function fixture(name: string): { event: Fixture; body: string } {
  const event = JSON.parse(readFileSync(`${ROOT}test/fixtures/events/${name}.json`, 'utf8')) as Fixture;
  return { event, body: JSON.stringify(event) };
}

/** Every fixture's name (test/fixtures/events/<name>.json), sorted. */
export function fixtureNames(): string[] {
  return readdirSync(`${ROOT}test/fixtures/events`)
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.slice(0, -'.json'.length))
    .sort();
}

/** The spec's signature, computed here without the SDK: HMAC-SHA256 over `${t}.` + body, hex. */
export function signature(body: string, key: string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac('sha256', key).update(`${t}.`).update(body).digest('hex')}`;
}

export function deliveryHeaders(signatureValue: string | undefined): Record<string, string> {
  return { 'content-type': 'application/json', ...(signatureValue === undefined ? {} : { 'service-signature': signatureValue }) };
}

export interface Answer {
  status: number;
  json: unknown;
  text: string;
}

export async function post(url: string, body: string, signatureValue: string | undefined): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers: deliveryHeaders(signatureValue), body });
  return answer(response);
}

export async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

export interface Running {
  /** The webhook URL the example printed. */
  url: string;
  /** The same origin, for other paths. */
  origin: string;
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM, then SIGKILL after 5 s (or `killAfterMs`); resolves with how it ended. */
  stop: (killAfterMs?: number) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends the process a signal (e.g. SIGHUP to examples/supervisor.mjs). */
  kill: (signal: NodeJS.Signals) => void;
}

const children = new Set<ChildProcess>();

/** Environment for a child: ours without any of the examples' variables, plus `env`. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'RACK_WEBHOOK_SECRETS',
    'PORT',
    'HOST',
    'PAGER_URL',
    'CHAT_WEBHOOK_URL',
    'DATABASE_URL',
    'INBOX_DIR',
    'INBOX_TABLE',
    'ALERT_INTERVAL_MS',
    'SHUTDOWN_DRAIN_MS',
    'REUSE_PORT',
  ])
    delete result[name];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete result[name];
    else result[name] = value;
  }
  return result;
}

function stopChild(child: ChildProcess, killAfterMs = 5000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return exited.finally(() => {
    clearTimeout(timer);
    children.delete(child);
  });
}

/** Spawns `node args` in the repository with `env` (over ours, without the examples' variables), killed by stopAllExamples, its output collected. */
function spawnChild(node: string, args: string[], env: Record<string, string | undefined>) {
  const child = spawn(node, args, { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return { child, stdout: () => stdout, stderr: () => stderr };
}

/**
 * Starts `node examples/<file>` and waits (10 s, or `startTimeoutMs`, at most) for its `listening on`
 * line. `node`: another Node binary than this one (e.g. Node 22 for `REUSE_PORT=1`).
 */
export function startExample(
  file: string,
  env: Record<string, string | undefined>,
  startTimeoutMs = 10_000,
  node = process.execPath,
): Promise<Running> {
  assertBuilt();
  // A short drain: a test's SIGTERM need not wait the 5 s a load balancer would.
  const { child, stdout, stderr } = spawnChild(node, [`examples/${file}`], { PORT: '0', SHUTDOWN_DRAIN_MS: '100', ...env });
  return new Promise((resolve, reject) => {
    const giveUp = (why: string) => {
      clearTimeout(timer);
      void stopChild(child);
      reject(new Error(`examples/${file} ${why}.\nstdout:\n${stdout()}\nstderr:\n${stderr()}`));
    };
    const timer = setTimeout(() => giveUp(`printed no "listening on" line within ${startTimeoutMs / 1000} s`), startTimeoutMs);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      giveUp(`exited (code ${code}, signal ${signal}) before listening`);
    child.once('exit', onExit);
    const onData = () => {
      const match = /^listening on (http:\/\/\S+)\n/m.exec(stdout());
      if (match === null) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.stdout!.off('data', onData);
      const url = match[1]!;
      resolve({
        url,
        origin: new URL(url).origin,
        stdout,
        stderr,
        stop: (killAfterMs?: number) => stopChild(child, killAfterMs),
        kill: (signal) => void child.kill(signal),
      });
    };
    child.stdout!.on('data', onData);
  });
}

/** Kills every example still running (afterEach). */
export async function stopAllExamples(): Promise<void> {
  await Promise.all([...children].map((child) => stopChild(child)));
}

/** Runs a script to completion (it must exit within `timeoutMs`). */
export function runToExit(
  args: string[],
  env: Record<string, string | undefined>,
  timeoutMs = 10_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { child, stdout, stderr } = spawnChild(process.execPath, args, env);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stopChild(child);
      reject(new Error(`node ${args.join(' ')} did not exit within ${timeoutMs} ms.\nstdout:\n${stdout()}\nstderr:\n${stderr()}`));
    }, timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout: stdout(), stderr: stderr() });
    });
  });
}

export interface Recorded {
  method: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface Recorder {
  url: string;
  requests: Recorded[];
  /** The next `count` requests are recorded and answered with `status`. */
  failNext: (status: number, count?: number) => void;
  close: () => Promise<void>;
}

/**
 * A recorder for the whole test file (handed to `use`, which keeps it in the file's variable):
 * after each test every example is stopped and the recorder emptied and answering 200 again.
 */
export function recorderForFile(use: (recorder: Recorder) => void): void {
  let recorder: Recorder | undefined;
  beforeAll(async () => {
    recorder = await startRecorder();
    use(recorder);
  });
  afterEach(async () => {
    await stopAllExamples();
    if (recorder === undefined) return;
    recorder.requests.length = 0;
    recorder.failNext(200, 0);
  });
  afterAll(() => recorder?.close());
}

/** A local endpoint standing in for the pager or the chat service: records JSON bodies. */
export function startRecorder(): Promise<Recorder> {
  const requests: Recorded[] = [];
  let failures: { status: number; count: number } = { status: 200, count: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = { unparsable: text };
      }
      requests.push({ method: req.method ?? '', headers: req.headers, body });
      const status = failures.count > 0 ? failures.status : 200;
      if (failures.count > 0) failures.count--;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status < 300 ? '{"ok":true}' : '{"error":"recorder told to fail"}');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/hook`,
        requests,
        failNext: (status, count = 1) => {
          failures = { status, count };
        },
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** A script that refused to start: exit code 1 and a single line on stderr matching `message`. */
export function expectRefusedToStart(result: { code: number | null; stderr: string }, message: RegExp): void {
  expect(result.code).toBe(1);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(message);
}

/** examples/<file> exits 1 with one line without RACK_WEBHOOK_SECRETS, and without `urlVariable` (where it sends). */
export async function expectNeedsSecretsAndUrl(file: string, urlVariable: string, url: string): Promise<void> {
  const noSecret = await runToExit([`examples/${file}`], { PORT: '0', [urlVariable]: url });
  expectRefusedToStart(noSecret, /^RACK_WEBHOOK_SECRETS is not set/);
  const noUrl = await runToExit([`examples/${file}`], { PORT: '0', RACK_WEBHOOK_SECRETS: newKey() });
  expectRefusedToStart(noUrl, new RegExp(`^${urlVariable} is not set`));
}

/** Runs `run` with a fresh inbox table, then stops every example and drops the table, even when `run` fails. */
export async function withFreshInboxTable(run: (database: { url: string; table: string }) => Promise<void>): Promise<void> {
  const database = await freshInboxTable();
  try {
    await run(database);
  } finally {
    await stopAllExamples();
    await database.drop();
  }
}

/**
 * An inbox table in a fresh schema of the test PostgreSQL for an example run with DATABASE_URL;
 * `drop()` removes it (after the example stopped).
 */
export async function freshInboxTable(): Promise<{ url: string; table: string; drop: () => Promise<void> }> {
  const { default: pg } = await import('pg');
  const url = process.env['RACK_WEBHOOKS_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
  // The name test/inbox/databases.ts's sweep dates (`rwt_<hex seconds>_<random>`): dropped by a later
  // run only once an hour old, should this run die before its drop.
  const schema = `rwt_${Math.floor(Date.now() / 1000).toString(16)}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  return {
    url,
    table: `${schema}.deliveries`,
    async drop() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
