import type { AnyWebhookEvent } from '../../events/types.js';
import type { ReceiverRuntime } from '../../receiver/inbox-contract.js';
import { describeThrown } from '../../shared/thrown.js';
import { MAX_TIMER_MS } from '../../shared/timers.js';
import type { Driver, Row } from '../database/driver.js';
import { inboxError } from '../errors.js';
import { boundError, toBytes } from '../rows.js';
import type { TableNames } from '../schema/table-name.js';
import { resolveBackoff, retryDelayMs, type BackoffOptions } from './backoff.js';
import { workerSql } from './sql.js';

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
   * @defaultValue the free slots, so no claimed row waits
   */
  batchSize?: number;
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
   * Wake on NOTIFY when a delivery is stored; `false` polls alone.
   *
   * @defaultValue `true`
   */
  listen?: boolean;
}

/** A running worker, as `inbox.work()` returns it. */
export interface Worker {
  /** Its `workerId`, as recorded in attempts and logs. */
  readonly id: string;
  /** Stops claiming, lets in-flight handlers finish, releases nothing held. */
  stop(): Promise<void>;
  /**
   * Resolves when no delivery is due and none is running, on any worker (tests, scripts, one-off
   * catch-up runs). A delivery whose worker died is waited for: once its lease runs out this
   * worker runs it. Retries scheduled for later are not due yet and are not waited for. Rejects
   * with a `WebhookInboxError` when the database cannot be read; resolves at once after `stop()`.
   */
  drain(): Promise<void>;
}

interface Claimed {
  id: string;
  body: Uint8Array;
  attempt: number;
  budgetUsed: number;
  replayed: boolean;
}

/** Thrown inside the handler's transaction to roll it back. */
class HandlersFailed {
  constructor(readonly failures: readonly unknown[]) {}
}
const LEASE_LOST = Symbol('lease lost');

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!Number.isSafeInteger(resolved) || resolved < 1) throw new RangeError(`${name} must be a whole number >= 1, got ${String(value)}`);
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

function randomId(): string {
  return `worker-${Math.random().toString(36).slice(2, 10)}`;
}

export function startWorker(
  driver: Driver,
  names: TableNames,
  runtime: ReceiverRuntime,
  options: WorkOptions,
  subscribe: (wake: () => void) => () => Promise<void>,
  relisten: () => void,
): Worker {
  const concurrency = positiveInteger('concurrency', options.concurrency, defaultConcurrency(driver));
  const batchSize = positiveInteger('batchSize', options.batchSize, concurrency);
  const pollIntervalMs = positiveInteger('pollIntervalMs', options.pollIntervalMs, 1000);
  if (pollIntervalMs > MAX_TIMER_MS)
    throw new RangeError(`pollIntervalMs must be at most ${MAX_TIMER_MS} (the longest a timer waits), got ${pollIntervalMs}`);
  // Each running handler holds a connection, LISTEN holds one, and receive() needs one: fewer is a silent hang.
  const needed = concurrency + (options.listen === false ? 0 : 1) + 1;
  if (driver.maxConnections !== undefined && driver.parallel && driver.maxConnections < needed) {
    throw new RangeError(
      `the pool's max (${driver.maxConnections}) must be at least ${needed}: one connection per handler (concurrency ${concurrency}), ` +
        `${options.listen === false ? '' : 'one for LISTEN, '}and one for receive(). Raise max or lower concurrency.`,
    );
  }
  const leaseSeconds = options.leaseSeconds ?? 30;
  if (!(leaseSeconds > 0) || !Number.isFinite(leaseSeconds))
    throw new RangeError(`leaseSeconds must be a finite number > 0, got ${String(leaseSeconds)}`);
  const maxAttempts = positiveInteger('maxAttempts', options.maxAttempts, 5);
  const backoff = resolveBackoff(options.backoff);
  const workerId = options.workerId ?? randomId();
  if (typeof workerId !== 'string' || workerId === '' || workerId.length > 200)
    throw new TypeError('workerId must be a non-empty string of at most 200 characters');
  const sql = workerSql(names);

  let stopping = false;
  let filling = false;
  let fillAgain = false;
  let databaseDown = false;
  const inFlight = new Set<Promise<void>>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const idleWaiters: (() => void)[] = [];

  /**
   * `keepAlive` for the poll loop: a worker holds its process open until stop(), as a listening
   * server does. Unref'd, a worker-only process exits with code 0 as soon as no connection is
   * open (PGlite has none; a pg Pool has none once an outage cut them all), which no supervisor
   * restarts. Retry timers need not: the poll loop picks those rows up too.
   */
  const later = (ms: number, fn: () => void, keepAlive = false) => {
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        fn();
      },
      Math.min(ms, MAX_TIMER_MS),
    ); // a longer wait would fire after 1 ms
    if (!keepAlive) (timer as { unref?: () => void }).unref?.();
    timers.add(timer);
  };

  const databaseFailed = (error: unknown, doing: string) => {
    const wrapped = inboxError(error, names.display, doing);
    // Loud once per outage, not once per poll.
    if (!databaseDown)
      runtime.log({
        level: 'error',
        event: wrapped.code,
        message: `worker ${workerId}: ${wrapped.message}; retrying every ${pollIntervalMs} ms`,
        code: wrapped.code,
      });
    databaseDown = true;
  };

  const recover = async () => {
    try {
      const rows = await driver.query(sql.recover, [maxAttempts]);
      for (const row of rows) {
        const dead = row['state'] === 'dead';
        runtime.log({
          level: dead ? 'error' : 'warn',
          event: dead ? 'dead' : 'retried',
          message: dead
            ? `attempt ${String(row['attempts'])} did not finish (its worker stopped) and no attempts are left: the delivery is dead`
            : `attempt ${String(row['attempts'])} did not finish (its worker stopped): due again`,
          action: String(row['action']),
          deliveryId: String(row['id']),
          attempt: Number(row['attempts']),
        });
      }
    } catch (error) {
      databaseFailed(error, 'recovering expired leases');
    }
  };

  const settleIdle = () => {
    if (inFlight.size > 0 || filling) return;
    for (const resolve of idleWaiters.splice(0)) resolve();
  };

  /** Claims while there are free slots and due rows; one pass at a time. */
  const fill = async (): Promise<void> => {
    if (filling) {
      fillAgain = true;
      return;
    }
    filling = true;
    let claimedAny = false;
    try {
      do {
        fillAgain = false;
        while (!stopping && inFlight.size < concurrency) {
          const wanted = Math.min(batchSize, concurrency - inFlight.size);
          let rows: Row[];
          try {
            rows = await driver.query(sql.claim, [wanted, workerId, leaseSeconds]);
          } catch (error) {
            databaseFailed(error, 'claiming deliveries');
            return;
          }
          if (databaseDown) {
            databaseDown = false;
            runtime.log({
              level: 'info',
              event: 'inbox_unavailable',
              message: `worker ${workerId}: the inbox database is reachable again`,
            });
          }
          claimedAny ||= rows.length > 0;
          for (const row of rows) {
            const attempt = Number(row['attempts']);
            const claimed: Claimed = {
              id: String(row['id']),
              body: toBytes(row['body']),
              attempt,
              budgetUsed: attempt - Number(row['attempt_base']),
              replayed: row['replayed_at'] !== null && row['replayed_at'] !== undefined,
            };
            if (stopping) {
              // stop() came while claiming: give the row back instead of starting it.
              await driver.query(sql.release, [claimed.id, workerId, claimed.attempt]).catch(() => {});
              continue;
            }
            const running: Promise<void> = process(claimed)
              .catch((error: unknown) => databaseFailed(error, 'finishing a delivery'))
              .finally(() => {
                inFlight.delete(running);
                if (!stopping) void fill();
                settleIdle();
              });
            inFlight.add(running);
          }
          if (rows.length < wanted) break;
        }
      } while (fillAgain && !stopping);
    } finally {
      filling = false;
      if (!claimedAny) settleIdle();
    }
  };

  const process = async (claimed: Claimed): Promise<void> => {
    let event: AnyWebhookEvent;
    try {
      event = runtime.parseStored(claimed.body);
    } catch (error) {
      // It parsed when it was accepted; a stricter SDK version (validate) may refuse it now. No retry helps.
      await recordFailure(claimed, `the stored body no longer parses: ${describeThrown(error)}`, true).catch((cause) =>
        databaseFailed(cause, 'recording a failure'),
      );
      runtime.log({
        level: 'error',
        event: 'dead',
        message: 'the stored body no longer parses: the delivery is dead',
        deliveryId: claimed.id,
        attempt: claimed.attempt,
      });
      return;
    }
    const context = { delivery: { id: claimed.id, attempt: claimed.attempt } };
    try {
      await driver.transaction(async (tx) => {
        const held = await tx.query(sql.lock, [claimed.id, workerId, claimed.attempt]);
        if (held.length === 0) throw LEASE_LOST;
        const failures = await runtime.runHandlers(event, { ...context, transaction: tx.client });
        if (failures.length > 0) throw new HandlersFailed(failures);
        await tx.query(sql.done, [claimed.id, claimed.attempt]);
      });
    } catch (error) {
      if (error === LEASE_LOST) {
        runtime.log({
          level: 'warn',
          event: 'retried',
          message: 'the lease ran out before the handlers started; another worker has the delivery',
          action: event.action,
          deliveryId: claimed.id,
          attempt: claimed.attempt,
        });
        return;
      }
      const failures = error instanceof HandlersFailed ? error.failures : [inboxError(error, names.display, 'running handlers')];
      const dead = claimed.budgetUsed >= maxAttempts;
      const delay = dead ? 0 : retryDelayMs(backoff, claimed.budgetUsed);
      const message = boundError(failures.map(describeThrown).join('; '));
      try {
        await recordFailure(claimed, message, dead, delay);
      } catch (cause) {
        // The row stays running; when its lease runs out, recovery counts the attempt.
        databaseFailed(cause, 'recording a failed attempt');
      }
      await runtime.reportFailure(event, failures, { id: claimed.id, attempt: claimed.attempt, willRetry: !dead });
      if (!dead) later(delay + 5, () => void fill());
      return;
    }
    runtime.log({
      level: 'info',
      event: claimed.replayed && claimed.budgetUsed === 1 ? 'replayed' : 'processed',
      message: claimed.replayed && claimed.budgetUsed === 1 ? 'replayed delivery processed' : 'delivery processed',
      action: event.action,
      deliveryId: claimed.id,
      attempt: claimed.attempt,
    });
  };

  const recordFailure = (claimed: Claimed, message: string, dead: boolean, delayMs = 0) =>
    driver.query(sql.fail, [claimed.id, workerId, claimed.attempt, delayMs, dead, boundError(message)]);

  // Wake-ups: notifications from the database and this process's own receivers; a poll as the floor.
  const unsubscribe = options.listen === false ? async () => {} : subscribe(() => void fill());
  const poll = () => {
    if (stopping) return;
    if (options.listen !== false) relisten();
    void recover()
      .then(fill)
      .finally(() => {
        if (!stopping) later(pollIntervalMs, poll, true);
      });
  };
  poll();

  return {
    id: workerId,
    async stop() {
      stopping = true;
      const unsubscribed = unsubscribe();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      while (filling || inFlight.size > 0) {
        await Promise.allSettled([...inFlight]);
        if (filling) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await unsubscribed;
    },
    async drain() {
      for (;;) {
        // Deliveries whose worker died count as due once their lease ran out: a catch-up run takes them too.
        await recover();
        await fill();
        if (inFlight.size > 0 || filling) {
          await new Promise<void>((resolve) => idleWaiters.push(resolve));
          continue;
        }
        // Nothing running here: is anything due, or running elsewhere (a live worker, or a dead one whose lease has not run out)?
        let unfinished: Row[];
        try {
          unfinished = await driver.query(sql.unfinished);
        } catch (error) {
          throw inboxError(error, names.display, 'draining');
        }
        if (unfinished.length === 0 || stopping) return;
        // Due, yet not claimed (another worker got there first): look again shortly. Running: when
        // its lease runs out (recovered then), or sooner if its worker finishes it; never a hot loop.
        const [row] = unfinished;
        const waitMs = row!['state'] === 'pending' ? 10 : Math.max(50, Math.ceil(Number(row!['lease_ms'])));
        await new Promise((resolve) => setTimeout(resolve, Math.min(pollIntervalMs, waitMs)));
      }
    },
  };
}
