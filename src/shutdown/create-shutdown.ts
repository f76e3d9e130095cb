/**
 * One call for a shutdown that loses no delivery: go unready at once while still taking
 * deliveries for `drainMs` (a load balancer needs that long to move away), then close the listener,
 * let the requests in flight finish (bounded), stop the worker, close the inbox, then your resources.
 */
import { describeThrown } from '../shared/thrown.js';
import { RequestsInFlight } from './connections.js';
import { ShutdownError } from './errors.js';
import { resolveShutdownOptions, type ShutdownSettings } from './options.js';
import type { Shutdown, ShutdownLogRecord, ShutdownOptions, ShutdownPhase, ShutdownResult, ShutdownServer } from './types.js';

/** The numbers of the signals a shutdown is usually wired to: a forced exit's code is 128 + it, as a shell reports a kill. */
const SIGNAL_NUMBERS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGUSR2: 12, SIGTERM: 15 };

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Closes the listener: no new connection from now on. Idle keep-alive connections close with it (Node >= 19). */
function closeListener(server: ShutdownServer): void {
  if (server.listening) server.close();
  else server.closeIdleConnections();
}

/** Waits for the requests in flight, at most `timeoutMs`; then destroys their connections. Returns how many were cut. */
async function finishRequests(requests: RequestsInFlight, timeoutMs: number): Promise<number> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)));
  const late = await Promise.race([requests.idle().then(() => false), timedOut]);
  clearTimeout(timer);
  return late ? requests.cut() : 0;
}

class ShutdownRun {
  phase: ShutdownPhase = 'serving';
  readonly #errors: Error[] = [];

  constructor(
    readonly server: ShutdownServer,
    readonly settings: ShutdownSettings,
    readonly requests: RequestsInFlight,
  ) {}

  log(level: ShutdownLogRecord['level'], message: string): void {
    try {
      this.settings.log({ level, event: 'shutdown', phase: this.phase, message });
    } catch {
      // A logger that throws must not stop the shutdown half-way.
    }
  }

  async #step(name: string, run: () => unknown): Promise<void> {
    try {
      await run();
    } catch (cause) {
      const error = new ShutdownError('shutdown_step_failed', `shutdown step ${name} failed: ${describeThrown(cause)}`, {
        step: name,
        cause,
      });
      this.#errors.push(error);
      this.log('warn', error.message);
    }
  }

  async run(reason: string): Promise<ShutdownResult> {
    const started = Date.now();
    const { drainMs, requestTimeoutMs, worker, workerTimeoutMs, inbox, close } = this.settings;
    this.phase = 'draining';
    this.requests.startClosing();
    const listening = this.server.listening;
    this.log('info', `${reason}: not ready; ${listening ? `taking deliveries for ${drainMs} ms more` : 'not listening'}`);
    if (listening && drainMs > 0) await delay(drainMs);

    this.phase = 'closing';
    closeListener(this.server);
    this.log('info', `listener closed; ${this.requests.count} request(s) in flight, ${requestTimeoutMs} ms to finish`);
    const cutConnections = await finishRequests(this.requests, requestTimeoutMs);
    if (cutConnections > 0)
      this.log('warn', `${cutConnections} connection(s) destroyed with a request still in flight after ${requestTimeoutMs} ms`);

    this.phase = 'stopping';
    if (worker !== undefined) await this.#step('worker', () => worker.stop({ timeoutMs: workerTimeoutMs }));
    if (inbox !== undefined) await this.#step('inbox', () => inbox.close());
    for (const [index, step] of close.entries()) await this.#step(`close[${index}]`, step);
    this.requests.detach();

    this.phase = 'closed';
    const durationMs = Date.now() - started;
    const errors = [...this.#errors];
    this.log(
      errors.length > 0 ? 'warn' : 'info',
      errors.length > 0 ? `done in ${durationMs} ms with ${errors.length} failed step(s)` : `done in ${durationMs} ms`,
    );
    return { reason, errors, cutConnections, durationMs };
  }
}

/**
 * A shutdown that loses nothing, in one call. On the first of `signals` (or `shutdown()`):
 *
 * 1. `ready()` turns false at once (readiness answers 503), and every answer from then on carries
 *    `Connection: close`, while deliveries are still taken for `drainMs`: new connections too;
 * 2. the listener closes (and idle keep-alive connections with it); requests in flight have
 *    `requestTimeoutMs` to finish, then their connections are destroyed;
 * 3. `worker.stop({ timeoutMs: workerTimeoutMs })`, then `inbox.close()`, then each `close` step,
 *    in order; a step that fails is logged and the next still runs.
 *
 * The same signal again exits at once. After a signal's shutdown the process exits (code 0, or 1
 * when a step failed) unless `exit: false`.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import pg from 'pg';
 * import { createReceiver } from 'rack-webhooks';
 * import { webhookMiddleware } from 'rack-webhooks/express';
 * import { createInbox, healthHandler } from 'rack-webhooks/inbox';
 * import { createShutdown } from 'rack-webhooks/node';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 5000 });
 * const inbox = createInbox({ database: pool });
 * const receiver = createReceiver({ secrets: process.env.RACK_WEBHOOK_SECRETS!, inbox });
 * const worker = inbox.work(receiver);
 *
 * const app = express();
 * app.all('/webhooks', webhookMiddleware(receiver));
 * const server = app.listen(3000);
 * const shutdown = createShutdown(server, { worker, inbox, close: () => pool.end() });
 * app.get('/readyz', healthHandler(inbox, { ready: shutdown.ready }).ready);
 * ```
 */
export function createShutdown(server: ShutdownServer, options: ShutdownOptions = {}): Shutdown {
  const settings = resolveShutdownOptions(server, options);
  const state = new ShutdownRun(server, settings, new RequestsInFlight(server));
  let running: Promise<ShutdownResult> | undefined;
  let startedBy: string | undefined;

  const shutdown = (reason = 'shutdown'): Promise<ShutdownResult> => (running ??= state.run(reason));

  const onSignal = (signal: NodeJS.Signals): void => {
    if (signal === startedBy) {
      state.log('warn', `${signal} again: exiting now`);
      process.exit(128 + (SIGNAL_NUMBERS[signal] ?? 0));
    }
    if (startedBy !== undefined) return state.log('info', `${signal} ignored: the shutdown started by ${startedBy} is under way`);
    startedBy = signal;
    const finish = (code: number) => {
      process.exitCode = code;
      // After the callers of shutdown() had their turn: they may still log.
      if (settings.exit) setImmediate(() => process.exit());
    };
    shutdown(signal).then(
      (result) => finish(result.errors.length > 0 ? 1 : 0),
      (error: unknown) => {
        state.log('warn', `the shutdown failed: ${describeThrown(error)}`);
        finish(1);
      },
    );
  };
  for (const signal of settings.signals) process.on(signal, onSignal);

  return {
    ready: () => running === undefined,
    get phase() {
      return state.phase;
    },
    shutdown,
  };
}
