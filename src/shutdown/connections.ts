/**
 * The requests a server has in flight, and the `Connection: close` every answer carries once the
 * shutdown has started, so that keep-alive clients (a load balancer's pool, a sender's agent)
 * open their next connection elsewhere instead of finding this one closed under them.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** Marks an answer as the last on its connection; Node closes the socket once it is written. */
function lastOnConnection(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
}

export class RequestsInFlight {
  readonly #server: Server;
  readonly #open = new Set<ServerResponse>();
  #closing = false;
  #whenIdle: (() => void) | undefined;

  constructor(server: Server) {
    this.#server = server;
    // First among the 'request' listeners: the header is set before the application writes any.
    server.prependListener('request', this.#onRequest);
  }

  get count(): number {
    return this.#open.size;
  }

  readonly #onRequest = (_req: IncomingMessage, res: ServerResponse): void => {
    this.#open.add(res);
    // 'close' follows 'finish', and also comes when the connection dies first.
    res.once('close', () => this.#settled(res));
    if (this.#closing) lastOnConnection(res);
  };

  #settled(res: ServerResponse): void {
    this.#open.delete(res);
    if (!this.#closing) return;
    // An answer whose headers went out before the signal said keep-alive: its socket is idle now.
    if (!this.#server.listening) this.#server.closeIdleConnections();
    if (this.#open.size === 0) this.#whenIdle?.();
  }

  /** From now on every answer not yet started, in flight or to come, carries `Connection: close`. */
  startClosing(): void {
    this.#closing = true;
    for (const res of this.#open) lastOnConnection(res);
  }

  /** Resolves once no request is in flight. */
  idle(): Promise<void> {
    if (this.#open.size === 0) return Promise.resolve();
    return new Promise((resolve) => (this.#whenIdle = resolve));
  }

  /** Destroys the connections of the requests still in flight; returns how many. */
  cut(): number {
    const sockets = new Set([...this.#open].map((res) => res.socket).filter((socket) => socket != null));
    for (const socket of sockets) socket.destroy();
    this.#server.closeAllConnections();
    return sockets.size;
  }

  detach(): void {
    this.#server.off('request', this.#onRequest);
  }
}
