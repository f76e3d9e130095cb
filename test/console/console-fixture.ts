/**
 * A whole console over a real PostgreSQL schema: a receiver storing into the inbox behind real
 * HTTP, a worker whose handlers a test steers, and the console's server, all in this process.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createNodeHandler } from '../../src/adapters/node.js';
import { startConsole, type RunningConsole } from '../../src/console/server/start-console.js';
import { composeInbox, type Inbox } from '../../src/inbox/create-inbox.js';
import type { Worker } from '../../src/inbox/work/worker.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { createSignedRequest } from '../../src/testing/signed-request.js';
import { openDatabase, type TestDatabase } from '../inbox/databases.js';
import { waitFor } from '../kit/time.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SCHEMAS = join(ROOT, 'schemas', 'events');

/** Stand-in page files for the server's own tests; the browser tests serve the real build. */
export function fakeAssets(): string {
  const directory = mkdtempSync(join(tmpdir(), 'rack-webhooks-console-assets-'));
  writeFileSync(join(directory, 'console.js'), 'console.log("page");\n');
  writeFileSync(join(directory, 'console.css'), 'body { color: black; }\n');
  return directory;
}

export interface ConsoleFixture {
  readonly db: TestDatabase<'pg'>;
  readonly inbox: Inbox;
  readonly console: RunningConsole;
  /** The receiver's URL (POST deliveries here). */
  readonly receiverUrl: string;
  readonly key: string;
  /** Actions whose handler throws until set otherwise. */
  readonly failing: Set<string>;
  /** Signs and POSTs one event; resolves with the receiver's status and JSON answer. */
  send(event: object, options?: { timestamp?: number }): Promise<{ status: number; body: Record<string, unknown> }>;
  startWorker(): Worker;
  /** Stops every worker started so far (their heartbeat rows go). */
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

export interface FixtureOptions {
  readonly assetsDirectory?: string;
  readonly maxAttempts?: number;
  readonly pollMs?: number;
}

export async function openConsoleFixture(options: FixtureOptions = {}): Promise<ConsoleFixture> {
  const db = await openDatabase('pg');
  const { inbox, operator, monitor } = composeInbox({ database: db.database, table: db.table });
  await inbox.migrate();
  const key = randomBytes(32).toString('hex');
  const failing = new Set<string>();
  const receiver = createReceiver({ secrets: key, inbox });
  receiver.onAny(async (event) => {
    if (failing.has(event.action)) throw new Error(`pager unreachable for ${event.action}`);
  });
  const server: Server = createServer(createNodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  const running = await startConsole({
    operator,
    monitor,
    databaseShown: 'postgres://postgres@127.0.0.1:5432/test',
    assetsDirectory: options.assetsDirectory ?? fakeAssets(),
    schemasDirectory: SCHEMAS,
    pollMs: options.pollMs ?? 100,
  });
  const workers: Worker[] = [];
  return {
    db,
    inbox,
    console: running,
    receiverUrl,
    key,
    failing,
    async send(event, sendOptions) {
      const request = await createSignedRequest(event, {
        secrets: key,
        ...(sendOptions?.timestamp === undefined ? {} : { timestamp: sendOptions.timestamp }),
      });
      const response = await fetch(receiverUrl, { method: 'POST', headers: request.headers, body: request.body });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    startWorker() {
      const worker = inbox.work(receiver, {
        maxAttempts: options.maxAttempts ?? 1,
        pollIntervalMs: 50,
        backoff: { baseMs: 10, jitter: 'none' },
      });
      workers.push(worker);
      return worker;
    },
    async stopWorkers() {
      await Promise.all(workers.splice(0).map((worker) => worker.stop()));
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.stop().catch(() => {})));
      await running.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.close();
    },
  };
}

/** Calls the fixture console's API with this session `cookie`: the status and the JSON body. */
export async function callApi<T = Record<string, unknown>>(
  fixture: ConsoleFixture,
  cookie: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${fixture.console.origin}${path}`, {
    ...init,
    headers: { cookie, ...(init.headers as Record<string, string>) },
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** Polls until `check` resolves truthy (a database state the test waits for), or fails after `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, what: string, ms = 10_000): Promise<T> {
  return waitFor(check, ms, () => what, 50);
}
