import { MAX_TIMER_MS } from '../../shared/timers.js';
import type { Driver } from '../../database/driver.js';
import { resolveBackoff, type BackoffOptions, type ResolvedBackoff } from './backoff.js';

/**
 * Options of `inbox.work(receiver, options)`. A pg or postgres.js pool whose `max` is below
 * `concurrency` + 2 is a `RangeError` at once.
 */
export interface WorkOptions {
  /**
   * Handlers running at once in this worker.
   *
   * @defaultValue half the pool's max, at most 16 (4 for a pg Pool's default max of 10); 1 on a single connection (a pg Client, PGlite)
   */
  concurrency?: number;
  /**
   * Rows claimed per round trip.
   *
   * @defaultValue 2 x `concurrency` (see `claimAhead`); with `mode: 'batched'`, 50 x `concurrency`, at least 100 and at most 1000 (claimed ahead of the handlers)
   */
  batchSize?: number;
  /**
   * The default mode's claim-ahead: up to this many deliveries held claimed beyond the running
   * handlers, each started as a handler ends, so that a claim's round trip overlaps the handlers
   * instead of leaving a slot idle (with `batchSize`, it drained the worker bench 1.3x faster). A
   * delivery claimed ahead has its attempt recorded at its claim and waits until a slot frees, at
   * most half its lease: then it is given back (pending, its attempt removed), as `stop()` gives
   * back every held one. `0` claims only for free slots: choose it when handlers run for many
   * seconds, so that no claimed delivery waits behind them. Batched mode claims ahead by
   * `batchSize` instead.
   *
   * @defaultValue 2 x `concurrency`
   */
  claimAhead?: number;
  /**
   * How often to look for due rows when no notification came, in ms.
   *
   * @defaultValue `1000`
   */
  pollIntervalMs?: number;
  /**
   * How long a claim is held before another worker may take the delivery again, in seconds. A
   * running handler keeps its row locked, so only a worker that stopped loses it.
   *
   * @defaultValue `30`
   */
  leaseSeconds?: number;
  /**
   * Attempts before a delivery is `'dead'` (a retry or replay grants this many again).
   *
   * @defaultValue `5`
   */
  maxAttempts?: number;
  /**
   * How long to wait before each retry.
   *
   * @defaultValue `{ baseMs: 1000, maxMs: 3_600_000, jitter: 'full' }`
   */
  backoff?: BackoffOptions;
  /**
   * Names this worker in attempts and logs.
   *
   * @defaultValue a random id, `worker-` and 8 characters
   */
  workerId?: string;
  /**
   * OpenTelemetry `process` spans and metrics for this worker's attempts (see the README); `false`
   * turns them off.
   *
   * @defaultValue `true`, unless the inbox or the receiver was created with `telemetry: false`
   */
  telemetry?: boolean;
  /**
   * Wake on NOTIFY when a delivery is stored; `false` polls alone.
   *
   * @defaultValue `true`
   */
  listen?: boolean;
  /**
   * `'per-app'`: at most one delivery of an app runs at a time, across every worker process, in
   * event-time order (to the nanosecond, then arrival); deliveries of different apps, and those
   * without an app, still run side by side. Every worker of one table must use the same `order`:
   * an unordered worker does not look at what the ordered ones run.
   *
   * @defaultValue `'none'`: due deliveries run concurrently, oldest event first
   */
  order?: 'none' | 'per-app';
  /**
   * With `order: 'per-app'`, what a failed attempt that will be retried does to its app's later
   * deliveries. `'hold'`: they wait until it succeeds or goes dead (strict order; one stuck app
   * holds only itself). `'skip'`: they run while it waits for its retry, which then runs after them.
   * A dead delivery never holds its app.
   *
   * @defaultValue `'hold'`
   */
  onFailure?: 'hold' | 'skip';
  /**
   * How often the worker's heartbeat row (`<table>_workers`) is refreshed, in ms. `inbox.health()`,
   * `inbox workers` and the console show a worker that missed 3 beats as gone.
   *
   * @defaultValue `5000`
   */
  heartbeatMs?: number;
  /**
   * `'transactional'`: each delivery runs in its own transaction, which `context.transaction`
   * exposes and which also marks it done: what a handler writes there commits if and only if the
   * delivery is done. `'batched'`, for handlers that only call out (HTTP, a queue, email) and so
   * need no transaction: one statement claims up to `batchSize` deliveries and records an attempt
   * for each (committed before any handler runs), handlers run `concurrency` at a time without
   * holding a connection, and one statement records many outcomes. Every attempt is still
   * recorded; `context.transaction` throws a `WebhookInboxError` (`inbox_no_transaction`). A
   * handler that outlives its lease (renewed while it runs) may run again on another worker.
   *
   * @defaultValue `'transactional'`
   */
  mode?: 'transactional' | 'batched';
}

/** The options with every default applied and every value checked (`telemetry` is read where the worker starts). */
export type ResolvedWorkOptions = Readonly<Required<Omit<WorkOptions, 'backoff' | 'telemetry'>> & { backoff: ResolvedBackoff }>;

/**
 * Batched mode's default batch, 50 x concurrency within these bounds: fewer rows per claim leave
 * the claim's round trip in the way (400 drained 1.2x to 1.3x faster than 100 at concurrency 8);
 * more would hold rows other workers could run.
 */
const BATCHED_MIN_BATCH = 100;
const BATCHED_MAX_BATCH = 1000;

/** `value`, or `fallback` when it is left out: a `RangeError` naming the option unless it is a whole number from `min` to `max`. */
function whole(name: string, value: number | undefined, fallback: number, min = 1, max = Infinity, why = ''): number {
  const resolved = value ?? fallback;
  if (!Number.isSafeInteger(resolved) || resolved < min)
    throw new RangeError(`${name} must be a whole number >= ${min}, got ${String(value)}`);
  if (resolved > max) throw new RangeError(`${name} must be at most ${max}${why}, got ${resolved}`);
  return resolved;
}

/** `value`, or the first choice when it is left out: a `RangeError` naming the option unless it is one of them. */
function oneOf<T extends string>(name: string, value: T | undefined, choices: readonly [T, T]): T {
  const resolved = value ?? choices[0];
  if (!choices.includes(resolved)) throw new RangeError(`${name} must be '${choices[0]}' or '${choices[1]}', got ${JSON.stringify(value)}`);
  return resolved;
}

/**
 * One connection: 1. A pool of known size: half of it, at most 16, so that receive() keeps the
 * other half (a pg Pool's default max of 10 gives 4). Unknown: 4.
 */
function defaultConcurrency(driver: Driver): number {
  if (!driver.parallel) return 1;
  if (driver.maxConnections === undefined) return 4;
  return Math.max(1, Math.min(16, Math.floor((driver.maxConnections - 1) / 2)));
}

/** Checks `options` against the driver; throws a `RangeError` or `TypeError` naming the option. */
export function resolveWorkOptions(driver: Driver, options: WorkOptions): ResolvedWorkOptions {
  const mode = oneOf('mode', options.mode, ['transactional', 'batched']);
  const batched = mode === 'batched';
  const concurrency = whole('concurrency', options.concurrency, defaultConcurrency(driver));
  // Batched: claims run ahead of the handlers, so that a claim's round trip never leaves a slot idle.
  const batchSize = whole(
    'batchSize',
    options.batchSize,
    batched ? Math.min(BATCHED_MAX_BATCH, Math.max(BATCHED_MIN_BATCH, concurrency * 50)) : 2 * concurrency,
  );
  if (batched && options.claimAhead !== undefined)
    throw new RangeError("claimAhead applies to the default mode only: mode 'batched' claims ahead by batchSize");
  const claimAhead = whole('claimAhead', options.claimAhead, 2 * concurrency, 0);
  const pollIntervalMs = whole('pollIntervalMs', options.pollIntervalMs, 1000, 1, MAX_TIMER_MS, ' (the longest a timer waits)');
  const listen = options.listen !== false;
  // Each running handler holds a connection (batched: the claim and the completion hold one each),
  // LISTEN holds one, and receive() needs one: fewer is a silent hang.
  const needed = (batched ? 2 : concurrency) + (listen ? 1 : 0) + 1;
  if (driver.maxConnections !== undefined && driver.parallel && driver.maxConnections < needed) {
    const sizedBy = driver.sizedBy ?? 'max';
    throw new RangeError(
      `the pool's ${sizedBy === 'max' ? 'max' : `size, ${sizedBy},`} (${driver.maxConnections}) must be at least ${needed}: ${batched ? 'one connection for claims and one for completions' : `one connection per handler (concurrency ${concurrency})`}, ` +
        `${listen ? 'one for LISTEN, ' : ''}and one for receive(). Raise ${sizedBy} or lower concurrency.`,
    );
  }
  const leaseSeconds = options.leaseSeconds ?? 30;
  if (!(leaseSeconds > 0) || !Number.isFinite(leaseSeconds))
    throw new RangeError(`leaseSeconds must be a finite number > 0, got ${String(leaseSeconds)}`);
  const maxAttempts = whole('maxAttempts', options.maxAttempts, 5);
  const backoff = resolveBackoff(options.backoff);
  const workerId = options.workerId ?? `worker-${Math.random().toString(36).slice(2, 10)}`;
  if (typeof workerId !== 'string' || workerId === '' || workerId.length > 200)
    throw new TypeError('workerId must be a non-empty string of at most 200 characters');
  const order = oneOf('order', options.order, ['none', 'per-app']);
  const onFailure = oneOf('onFailure', options.onFailure, ['hold', 'skip']);
  if (options.onFailure !== undefined && order !== 'per-app')
    throw new RangeError("onFailure applies to order: 'per-app' only: without an order, a failed delivery never holds another");
  const heartbeatMs = whole('heartbeatMs', options.heartbeatMs, 5000, 1, Math.floor(MAX_TIMER_MS / 3));
  return {
    concurrency,
    batchSize,
    claimAhead,
    pollIntervalMs,
    leaseSeconds,
    maxAttempts,
    backoff,
    workerId,
    listen,
    order,
    onFailure,
    heartbeatMs,
    mode,
  };
}
