/** A real HTTP server and a keep-alive client for the shutdown tests. */
import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Served {
  readonly server: Server;
  readonly port: number;
  /** Closes whatever is left (the test may have shut the server down already). */
  close(): Promise<void>;
}

export async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Served> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        if (server.listening) server.close(() => resolve());
        else resolve();
      }),
  };
}

export interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The connection it came on (to see it reused, or closed). */
  readonly socket: Socket;
}

/** One request; rejects with the socket's error (ECONNREFUSED, ECONNRESET, "socket hang up"). */
export function send(port: number, agent: Agent, path = '/', body = ''): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: body === '' ? 'GET' : 'POST', agent }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, socket: req.socket! }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A keep-alive agent with one connection: every request reuses it while it is open. */
export const oneConnection = () => new Agent({ keepAlive: true, maxSockets: 1 });

/** Resolves when the socket closes (at once if it has). */
export function closed(socket: Socket): Promise<void> {
  return socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()));
}
