/**
 * For the inbox forward suite: the deployed side (the Node adapter over an inbox, production key),
 * a developer's local receiver (local key, its own dedup) that records every body it verified, and
 * the built CLI's `inbox forward` as a real process, read line by line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { createNodeHandler } from '../../src/adapters/node.js';
import { createInbox } from '../../src/inbox.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { createSignedRequestSync, toFetchRequest } from '../../src/testing/signed-request.js';
import { CLI } from './helpers.js';
export const PROD_KEY = 'production-key-never-leaves';
export const LOCAL_KEY = 'local-development-key';

/** What the local receiver saw: each body it verified with the local key, and its answer. */
export interface Received {
  readonly body: string;
  readonly outcome: string;
}

export interface LocalReceiver {
  readonly url: string;
  readonly received: Received[];
  /** Resolves once `count` deliveries were answered 2xx. */
  until(count: number): Promise<void>;
  close(): Promise<void>;
}

/** A developer's receiver: verifies with LOCAL_KEY (header `headerName`), dedups; answers 503 to the bodies `failing` picks. */
export async function localReceiver(
  options: { port?: number; headerName?: string; failing?: (body: string) => boolean } = {},
): Promise<LocalReceiver> {
  const receiver = createReceiver({ secrets: LOCAL_KEY, ...(options.headerName === undefined ? {} : { headerName: options.headerName }) });
  receiver.onAny(() => {});
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (options.failing?.(body.toString('utf8')) === true) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"handler_failed","message":"boom"}');
        return;
      }
      receiver.receive({ body, headers: req.headers }).then(
        (result) => {
          received.push({ body: body.toString('utf8'), outcome: result.outcome });
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: result.outcome }));
          for (const wake of waiters.splice(0)) wake();
        },
        (error: { status?: number; code?: string }) => {
          res.writeHead(error.status ?? 500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: error.code }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    until: (count) =>
      new Promise((resolve) => {
        const check = () => (received.length >= count ? resolve() : waiters.push(check));
        check();
      }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The deployed side: the Node adapter over an inbox on PostgreSQL, production key. */
export async function productionReceiver(database: unknown, table: string): Promise<{ url: string; close(): Promise<void> }> {
  const inbox = createInbox({ database, table });
  await inbox.migrate();
  const handle = createNodeHandler(createReceiver({ secrets: PROD_KEY, inbox }));
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/webhooks`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let counter = 0;
/** A body no other test sends, with odd spacing and non-ASCII text: only the exact bytes verify. */
export function body(action = 'app:budget:cap', app = 'alpha'): string {
  counter++;
  const second = String(counter % 60).padStart(2, '0');
  return `{"action":"${action}",  "status":"success","timestamp":"2026-02-01T00:${String(Math.floor(counter / 60) % 60).padStart(2, '0')}:${second}Z","data":{"app":"${app}","rack":"café-${counter}","actor":"system","name":"${app}"}}`;
}

export async function deliver(url: string, text: string): Promise<void> {
  const response = await fetch(toFetchRequest(url, createSignedRequestSync(text, { secrets: PROD_KEY })));
  expect(response.status).toBe(200);
  await response.arrayBuffer();
}

export interface Forward {
  readonly child: ChildProcess;
  readonly out: string[];
  readonly err: string[];
  waitFor(stream: 'out' | 'err', pattern: RegExp): Promise<string>;
  exit(): Promise<number | null>;
}

/** `inbox forward` as a real process: its stdout and stderr by line. */
export function startForward(args: readonly string[], env: Record<string, string> = {}): Forward {
  const child = spawn(process.execPath, [CLI, 'inbox', 'forward', ...args], {
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = { out: [] as string[], err: [] as string[] };
  const waiters: (() => void)[] = [];
  for (const stream of ['out', 'err'] as const) {
    let buffered = '';
    (stream === 'out' ? child.stdout! : child.stderr!).setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      lines[stream].push(...parts);
      for (const wake of waiters.splice(0)) wake();
    });
  }
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    ...lines,
    waitFor: (stream, pattern) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${stream} line matching ${pattern}: ${JSON.stringify(lines)}`)), 15_000);
        const check = () => {
          const line = lines[stream].find((candidate) => pattern.test(candidate));
          if (line === undefined) waiters.push(check);
          else {
            clearTimeout(timer);
            resolve(line);
          }
        };
        check();
      }),
    exit: () => exited,
  };
}

export function forwardedIds(lines: readonly string[]): string[] {
  return lines.map((line) => /\bid=(\d+)\b/.exec(line)?.[1]).filter((id): id is string => id !== undefined);
}
