import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

/** A real HTTP receiver on 127.0.0.1 that records what it got and answers after `delayMs`. */
export async function recordingReceiver(options: { status?: number; delayMs?: number } = {}) {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() });
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(options.status ?? 200, { 'content-type': 'application/json' }).end('{}');
      }, options.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
