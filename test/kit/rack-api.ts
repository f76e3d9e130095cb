/**
 * The emulator's rack API for tests: served over real HTTP or HTTPS (a self-signed certificate
 * made with openssl), a receiver with an inbox that the emulator's webhooks reach, and the
 * client wired to the handler without a socket where the transport is not what is tested.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RackFetch } from '../../src/rack-api/client.js';
import { ConnectionDropped, type RackApiEmulator } from '../../src/testing/rack-api/api.js';

export interface Served {
  readonly url: string;
  close(): Promise<void>;
}

/** A self-signed certificate for 127.0.0.1, as a local/metal rack presents (ECDSA P-256, CN api). */
export function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'rack-tls-'));
  try {
    execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', join(dir, 'key.pem')]);
    execFileSync('openssl', [
      'req',
      '-new',
      '-x509',
      '-key',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '365',
      '-subj',
      '/CN=api',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]);
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function answer(api: RackApiEmulator, base: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  try {
    const response = await api.handle(new Request(new URL(req.url ?? '/', base), { method: req.method ?? 'GET', headers }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  } catch (error) {
    if (error instanceof ConnectionDropped) req.socket.destroy();
    else res.writeHead(500).end(String(error));
  }
}

/** The emulator's API on 127.0.0.1, over HTTPS when `tls` is given. */
export async function serveRackApi(api: RackApiEmulator, tls?: { key: string; cert: string }): Promise<Served> {
  const scheme = tls === undefined ? 'http' : 'https';
  let base = '';
  const handler = (req: IncomingMessage, res: ServerResponse) => void answer(api, base, req, res);
  const server = tls === undefined ? createHttpServer(handler) : createHttpsServer(tls, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The client's fetch straight into the handler: the routes and the state, without a socket. */
export function inProcessFetch(api: RackApiEmulator): RackFetch {
  return (url, init) => api.handle(new Request(url, { method: init.method, headers: init.headers }));
}
