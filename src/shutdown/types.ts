/**
 * The public shapes of {@link createShutdown}: its options, what it returns, and its log records.
 * Types only: the server, the worker and the inbox are described by what shutdown calls on them.
 */
import type { Server } from 'node:http';

/**
 * Where a shutdown is: `serving` (ready), `draining` (readiness 503, deliveries still taken),
 * `closing` (the listener is closed, requests in flight finish), `stopping` (the worker, the inbox
 * and your resources close, in that order), `closed`.
 */
export type ShutdownPhase = 'serving' | 'draining' | 'closing' | 'stopping' | 'closed';

/** What shutdown needs of a worker from `inbox.work()`. */
export interface ShutdownWorker {
  /** Stops claiming and waits for the handlers in flight; past `timeoutMs` (ms), aborts them and resolves. */
  stop(options?: { timeoutMs?: number }): Promise<void>;
}

/** What shutdown needs of an inbox from `createInbox()`. */
export interface ShutdownInbox {
  /** Writes the refusal counts held in memory and stops their timer; the database client is not ended. */
  close(): Promise<void>;
}

/** A step of its own, run last: closing a pool, flushing telemetry. May return a promise. */
export type ShutdownStep = () => unknown;

/** One line of the shutdown's log: one per phase, one per step that failed. Never a body, a header or a secret. */
export interface ShutdownLogRecord {
  /** `warn` when connections were cut or a step failed, else `info`. */
  readonly level: 'info' | 'warn';
  /** Always `'shutdown'`. */
  readonly event: 'shutdown';
  /** The phase this line reports (`closed` for the final line). */
  readonly phase: ShutdownPhase;
  /** One line for people. */
  readonly message: string;
}

/** Where {@link ShutdownLogRecord}s go: a function, or `false` for nowhere. */
export type ShutdownLogger = ((record: ShutdownLogRecord) => void) | false;

/** Options of {@link createShutdown}. */
export interface ShutdownOptions {
  /**
   * After the signal, how long readiness answers 503 while deliveries are still taken, in ms: the
   * time a load balancer needs to see the 503 and move away (Kubernetes also removes the pod from
   * its endpoints after SIGTERM, which takes a few seconds to reach every proxy).
   *
   * @defaultValue `5000`
   */
  drainMs?: number;
  /**
   * After the listener closes, how long requests in flight have to finish, in ms; past it their
   * connections are destroyed (a request still storing keeps storing: the database is closed last).
   *
   * @defaultValue `10000`
   */
  requestTimeoutMs?: number;
  /**
   * A worker from `inbox.work()`: stopped with `stop({ timeoutMs: workerTimeoutMs })` once no request is in flight.
   *
   * @defaultValue none: no worker is stopped
   */
  worker?: ShutdownWorker;
  /**
   * The worker's bound, in ms: past it, its handlers' `context.signal` is aborted and their
   * deliveries are left to the lease (they run again).
   *
   * @defaultValue `10000`
   */
  workerTimeoutMs?: number;
  /**
   * The inbox: `inbox.close()` after the worker, which writes the last refusal counts.
   *
   * @defaultValue none: no inbox is closed
   */
  inbox?: ShutdownInbox;
  /**
   * Run last, in order, each once, even when an earlier step failed: e.g. `() => pool.end()`.
   *
   * @defaultValue none
   */
  close?: ShutdownStep | readonly ShutdownStep[];
  /**
   * The signals that start the shutdown; the same signal again while it runs exits at once (with
   * code 128 + the signal's number). `false`: wire them yourself and call `shutdown()`.
   *
   * @defaultValue `['SIGTERM', 'SIGINT']`
   */
  signals?: readonly NodeJS.Signals[] | false;
  /**
   * After a shutdown started by one of `signals`: `process.exit()` once it is done, with code 0,
   * or 1 when a step failed, so that a timer or a socket left open cannot keep the process up until
   * the orchestrator kills it. `false` only sets `process.exitCode`.
   *
   * @defaultValue `true`
   */
  exit?: boolean;
  /**
   * One record per phase (and per failed step).
   *
   * @defaultValue one line on `console.info` (`console.warn` for `warn`), prefixed `[rack-webhooks]`
   */
  logger?: ShutdownLogger;
}

/** What a shutdown did, once it is done. */
export interface ShutdownResult {
  /** What started it: the signal, or the reason given to `shutdown(reason)`. */
  readonly reason: string;
  /** The failed steps' errors (`code: 'shutdown_step_failed'`), in order; empty when all went well. */
  readonly errors: readonly Error[];
  /** Connections destroyed with a request still in flight past `requestTimeoutMs`. */
  readonly cutConnections: number;
  /** From the start of the shutdown to its end, in ms. */
  readonly durationMs: number;
}

/** What {@link createShutdown} returns. Both methods may be passed around unbound. */
export interface Shutdown {
  /** `true` until the shutdown starts: pass it to `healthHandler(inbox, { ready })`. */
  ready(): boolean;
  /** Where the shutdown is. */
  readonly phase: ShutdownPhase;
  /**
   * Starts the shutdown (or returns the one under way: the same promise). Never rejects: a step's
   * failure is in the result's `errors`, logged, and the later steps still run.
   */
  shutdown(reason?: string): Promise<ShutdownResult>;
}

/** The server shutdown drains: a `node:http` or `node:https` server. */
export type ShutdownServer = Server;
