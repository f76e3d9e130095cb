/**
 * The console's HTTP server over one inbox: started by `rack-webhooks console`, and in-process by
 * the tests. It binds 127.0.0.1 unless told otherwise, on a free port unless told, and its URL
 * carries a fresh random token.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InboxMonitor, InboxOperator } from '../../inbox/facade/index.js';
import { AppsIndex } from './api/apps.js';
import { ChangeFeed } from './api/changes.js';
import { openGaps } from './api/gaps.js';
import { fieldDescriber } from './api/schema-fields.js';
import { loadAssets, transferSize } from './assets.js';
import { consoleAccess, newToken } from './auth.js';
import { handleConsoleRequest, type ConsoleContext } from './router.js';

export interface ConsoleOptions {
  /** What the console reads and changes: deliveries, stats, history, open alerts, what changed. */
  readonly operator: InboxOperator;
  /** Workers, refusals and the log gaps a watcher found. */
  readonly monitor: InboxMonitor;
  /** The database as it may be shown (a password masked). */
  readonly databaseShown: string;
  /** The built page (dist/console). */
  readonly assetsDirectory: string;
  /** The package's schemas/events, for field descriptions. */
  readonly schemasDirectory: string;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: a free port. */
  readonly port?: number;
  /** Default: 32 fresh random bytes. */
  readonly token?: string;
  /** How often the change fingerprint is read while a page listens; default 500 ms. */
  readonly pollMs?: number;
  /** Background failures (the change feed); never a token, body or signature. */
  readonly onError?: (error: unknown) => void;
}

export interface RunningConsole {
  /** The URL to open, with its token. */
  readonly url: string;
  /** The same without the token (for messages that may be logged). */
  readonly origin: string;
  readonly token: string;
  /** Every file of the page as sent: raw bytes and gzip. */
  readonly pageBytes: { readonly raw: number; readonly gzip: number };
  close(): Promise<void>;
}

export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const assets = loadAssets(options.assetsDirectory);
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? newToken();
  const onError = options.onError ?? (() => {});
  const { operator, monitor } = options;
  const apps = new AppsIndex(operator, undefined, () => monitor.logGaps());
  const changes = new ChangeFeed(operator, options.pollMs ?? 500, onError);
  const describe = fieldDescriber(options.schemasDirectory);
  const overview = () => ({ table: operator.table, database: options.databaseShown });

  // Filled in once the port is known (the cookie's name and the Host check depend on it).
  const ready: { context?: ConsoleContext } = {};
  const server = createServer((req, res) => {
    if (ready.context === undefined) return void res.writeHead(503).end();
    handleConsoleRequest(ready.context, req, res).catch((error: unknown) => {
      onError(error);
      if (!res.headersSent) res.writeHead(500).end();
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`cannot listen on ${host}:${options.port ?? 0} (${error.code ?? error.message})`)),
    );
    server.listen(options.port ?? 0, host, resolve);
  });
  const address = server.address() as AddressInfo;
  const access = consoleAccess(token, host, address.port);
  const gaps = () =>
    openGaps(
      () => monitor.logGaps(),
      () => monitor.reconcileStatus(),
    );
  ready.context = { access, assets, operator, monitor, apps, changes, describe, overview, gaps };
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  // Bound to every interface: this machine's loopback name is one that surely works here.
  const origin = `http://${access.anyHost ? '127.0.0.1' : shownHost}:${address.port}`;

  let closing: Promise<void> | undefined;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    pageBytes: transferSize(assets),
    close() {
      closing ??= new Promise<void>((resolve) => {
        changes.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
