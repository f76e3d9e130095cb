/**
 * A load balancer as small as a test allows, with the two traits that matter for a deploy: it
 * sends to a backend only while its `GET /readyz` answers 200 (checked every `probeEveryMs`, as a
 * Kubernetes Service or a cloud balancer does), and it NEVER retries: a backend that refuses or
 * resets a request makes it a 502 to the sender, as the rack would see it.
 */
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Backend {
  readonly port: number;
  ready: boolean;
  /** Failed probes in a row: out of rotation at FAILURE_THRESHOLD (a probe lost to a loaded machine is not a verdict). */
  failures: number;
  /** The last probe's outcome, for a failure's message. */
  last: string;
  /** Probes answered 200 so far (a test waits for the first). */
  readyProbes: number;
}

/** Reads a whole message body. */
function readAll(message: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.on('end', () => resolve(Buffer.concat(chunks)));
    message.on('error', reject);
  });
}

/** As a Kubernetes readinessProbe's failureThreshold: this many failed probes in a row take a backend out. */
const FAILURE_THRESHOLD = 3;

export class ReadinessBalancer {
  readonly #backends = new Map<string, Backend>();
  /** Keep-alive connections to the backends, as a real balancer pools them. */
  // An idle connection is dropped after 4 s, before Node's server does (keepAliveTimeout, 5 s): else the
  // server may close one just as a request goes out on it, a reset that has nothing to do with a deploy.
  readonly #pool = new Agent({ keepAlive: true, maxSockets: 32, timeout: 4000 });
  readonly #server: Server;
  #probing: ReturnType<typeof setInterval> | undefined;
  #next = 0;
  /** Requests the balancer could not pass on: no backend ready, or the backend failed (refused, reset). */
  readonly failures: string[] = [];

  constructor(readonly probeEveryMs = 200) {
    this.#server = createServer((req, res) => void this.#forward(req, res));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#probing = setInterval(() => this.#probeAll(), this.probeEveryMs);
    return (this.#server.address() as AddressInfo).port;
  }

  /** A new endpoint: not ready until its first probe answers 200. */
  add(name: string, port: number): void {
    this.#backends.set(name, { port, ready: false, failures: 0, last: 'not probed', readyProbes: 0 });
  }

  /** The endpoint is gone (its process exited). */
  remove(name: string): void {
    this.#backends.delete(name);
  }

  isReady(name: string): boolean {
    return this.#backends.get(name)?.ready === true;
  }

  #probeAll(): void {
    for (const backend of this.#backends.values()) {
      const failed = (why: string) => {
        backend.last = why;
        if (++backend.failures >= FAILURE_THRESHOLD) backend.ready = false;
      };
      const probe = request({ host: '127.0.0.1', port: backend.port, path: '/readyz', agent: false, timeout: 2000 }, (res) => {
        res.resume();
        if (res.statusCode !== 200) return failed(`readyz ${res.statusCode}`);
        backend.last = 'readyz 200';
        backend.ready = true;
        backend.failures = 0;
        backend.readyProbes++;
      });
      probe.on('timeout', () => probe.destroy(new Error('probe timed out')));
      probe.on('error', (error: NodeJS.ErrnoException) => failed(error.code ?? error.message));
      probe.end();
    }
  }

  #pick(): Backend | undefined {
    const ready = [...this.#backends.values()].filter((backend) => backend.ready);
    if (ready.length === 0) return undefined;
    return ready[this.#next++ % ready.length];
  }

  async #forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req);
    const backend = this.#pick();
    if (backend === undefined) {
      const states = [...this.#backends].map(([name, { last, failures }]) => `${name}: ${last} (${failures} failed)`);
      return this.#fail(res, 503, `no backend ready at ${new Date().toISOString()}: ${states.join(', ') || 'none'}`);
    }
    const headers = { ...req.headers, 'content-length': String(body.length) };
    delete headers.connection;
    delete headers.host;
    const upstream = request(
      { host: '127.0.0.1', port: backend.port, path: req.url, method: req.method, headers, agent: this.#pool },
      (answer) => {
        void readAll(answer).then(
          (text) => {
            res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'text/plain' });
            res.end(text);
          },
          (error: Error) => this.#fail(res, 502, `backend ${backend.port} cut its answer: ${error.message}`),
        );
      },
    );
    upstream.on('error', (error: NodeJS.ErrnoException) => this.#fail(res, 502, `backend ${backend.port}: ${error.code ?? error.message}`));
    upstream.end(body);
  }

  #fail(res: ServerResponse, status: number, why: string): void {
    this.failures.push(why);
    if (res.headersSent) return void res.destroy();
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(why);
  }

  async close(): Promise<void> {
    clearInterval(this.#probing);
    this.#pool.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
