// One factory per adapter: each starts a real HTTP server on 127.0.0.1 around a receiver.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express5 from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import type { AdapterOptions } from '../../src/adapters/core.js';
import { webhookMiddleware } from '../../src/adapters/express.js';
import rackWebhooks from '../../src/adapters/fastify.js';
import { createNodeHandler } from '../../src/adapters/node.js';
import { createFetchHandler } from '../../src/adapters/web.js';
import type { Receiver } from '../../src/index.js';

export interface Running {
  url: string;
  close: () => Promise<void>;
}
export type Mount = 'plain' | 'json-parser-first' | 'json-parser-keeping-raw' | 'raw-parser' | 'text-parser';
export type StartServer = (receiver: Receiver, options?: AdapterOptions, mount?: Mount) => Promise<Running>;

function listen(server: Server): Promise<Running> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/webhooks`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Bridges node:http to a fetch handler, streaming the body, as Hono's and Next's servers do. */
function fetchBridge(handler: (request: Request) => Promise<Response>) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    let cancelled = false;
    const body = hasBody
      ? (new ReadableStream({
          start(controller) {
            req.on('data', (chunk: Buffer) => {
              if (!cancelled) controller.enqueue(new Uint8Array(chunk));
            });
            req.on('end', () => {
              if (!cancelled) controller.close();
            });
            req.on('error', (error) => {
              if (!cancelled) controller.error(error);
            });
          },
          // The handler stopped reading (413): the rest is drained and dropped, as Node's own server
          // does with an unread body, so closing never resets the connection before the 413 is read.
          cancel() {
            cancelled = true;
          },
        }) as unknown as BodyInit)
      : null;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body, duplex: 'half' } as RequestInit);
    const response = await handler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  };
}

function expressApp(express: typeof express5, receiver: Receiver, options: AdapterOptions, mount: Mount) {
  const app = express();
  if (mount === 'json-parser-first') app.use(express.json());
  if (mount === 'json-parser-keeping-raw') {
    app.use(
      express.json({
        verify: (req, _res, buf) => {
          (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buf;
        },
      }),
    );
  }
  if (mount === 'raw-parser') app.use('/webhooks', express.raw({ type: 'application/json', limit: '5mb' }));
  if (mount === 'text-parser') app.use('/webhooks', express.text({ type: 'application/json', limit: '5mb' }));
  app.all('/webhooks', webhookMiddleware(receiver, options));
  app.post('/other', express.json(), (req, res) => {
    res.json({ echoed: req.body });
  });
  return listen(createServer(app));
}

export const adapters: Record<string, StartServer> = {
  'node:http': async (receiver, options = {}) => listen(createServer(createNodeHandler(receiver, options))),
  'express 5': (receiver, options = {}, mount = 'plain') => expressApp(express5, receiver, options, mount),
  'express 4': (receiver, options = {}, mount = 'plain') => expressApp(express4 as unknown as typeof express5, receiver, options, mount),
  fastify: async (receiver, options = {}) => {
    // Closed as the node:http servers above are: every connection at once. A connection whose body
    // a 413 left unread is not idle, and would hold app.close() for 5 s.
    const app = Fastify({ logger: false, forceCloseConnections: true });
    app.post('/other', async (request) => ({ echoed: request.body })); // the app's own JSON parsing
    await app.register(rackWebhooks, { receiver, ...options });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/webhooks`, close: () => app.close() };
  },
  'fetch (web)': async (receiver, options = {}) => listen(createServer(fetchBridge(createFetchHandler(receiver, options)))),
};
