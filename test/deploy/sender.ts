/**
 * The rack, as far as a deploy is concerned: signed deliveries at a steady rate, each sent ONCE, on
 * keep-alive connections; every answer (or error) recorded against the delivery's app name, which
 * is unique, so that the table can be checked for every 2xx.
 */
import { Agent, request } from 'node:http';
import { fixture, signature } from '../examples/helpers.js';
import { waitFor } from '../kit/time.js';
import type { TestDatabase } from '../inbox/databases.js';

const FIRED = fixture('app.budget.auto-shutdown.fired');

export interface Outcome {
  readonly app: string;
  /** The HTTP status, or 0 when the request failed. */
  readonly status: number;
  /** The answer's body, or the error's code (ECONNREFUSED, ECONNRESET, ...). */
  readonly detail: string;
}

export class Sender {
  readonly outcomes: Outcome[] = [];
  // Idle connections dropped after 4 s, before the server's keepAliveTimeout (5 s): a server closing an
  // idle one as a request goes out on it is a reset of Node's keep-alive, not of a deploy.
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 16, timeout: 4000 });
  readonly #inFlight = new Set<Promise<void>>();
  #timer: ReturnType<typeof setInterval> | undefined;
  sent = 0;

  constructor(
    readonly url: URL,
    readonly key: string,
    readonly perSecond = 100,
  ) {}

  /** Sends at `perSecond` (catching up after a slow turn of the event loop) until `stop()`. */
  start(): void {
    const started = Date.now();
    this.#timer = setInterval(() => {
      const due = Math.floor(((Date.now() - started) * this.perSecond) / 1000);
      while (this.sent < due) this.#sendOne(`deploy-${String(this.sent++).padStart(6, '0')}`);
    }, 10);
  }

  #sendOne(app: string): void {
    const body = JSON.stringify({ ...FIRED.event, data: { ...FIRED.event.data, app } });
    const delivery = new Promise<void>((resolve) => {
      const req = request(
        {
          host: this.url.hostname,
          port: this.url.port,
          path: this.url.pathname,
          method: 'POST',
          agent: this.#agent,
          headers: { 'content-type': 'application/json', 'service-signature': signature(body, this.key) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(void this.outcomes.push({ app, status: res.statusCode ?? 0, detail: text })));
          res.on('error', (error: NodeJS.ErrnoException) =>
            resolve(void this.outcomes.push({ app, status: 0, detail: error.code ?? error.message })),
          );
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) =>
        resolve(void this.outcomes.push({ app, status: 0, detail: error.code ?? error.message })),
      );
      req.end(body);
    });
    this.#inFlight.add(delivery);
    void delivery.then(() => this.#inFlight.delete(delivery));
  }

  /** Stops sending and waits for every answer. */
  async stop(): Promise<Outcome[]> {
    clearInterval(this.#timer);
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
    this.#agent.destroy();
    return this.outcomes;
  }
}

/** The figures a deploy is judged by. */
export function tally(outcomes: readonly Outcome[], stored: ReadonlySet<string>) {
  const ok = outcomes.filter((outcome) => outcome.status >= 200 && outcome.status < 300);
  return {
    sent: outcomes.length,
    answered2xx: ok.length,
    refusedOrReset: outcomes.filter((outcome) => outcome.status === 0).length,
    otherStatus: outcomes.filter((outcome) => outcome.status !== 0 && (outcome.status < 200 || outcome.status >= 300)).length,
    okNotStored: ok.filter((outcome) => !stored.has(outcome.app)).length,
  };
}

/** Resolves once `sender` has sent 100 more deliveries than now (the load goes on between restarts). */
export async function hundredMore(sender: Sender): Promise<void> {
  const sentBefore = sender.sent;
  await waitFor(
    () => sender.sent >= sentBefore + 100,
    30_000,
    () => 'the sender stalled',
  );
}

/**
 * After the last restart: 100 more deliveries, then the sender stops, and its answers are tallied
 * against the table's rows (each delivery's app name is unique).
 */
export async function finishAndTally(sender: Sender, database: TestDatabase<'pg'>) {
  await hundredMore(sender);
  const outcomes = await sender.stop();
  const rows = await database.query<{ app: string }>(`SELECT app FROM ${database.table}`);
  return { outcomes, rows, figures: tally(outcomes, new Set(rows.map((row) => row.app))) };
}
