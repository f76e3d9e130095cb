import type { Driver, Row } from '../../database/driver.js';
import { failingAs } from '../operate/query.js';
import type { TableNames } from '../schema/table-name.js';
import { toDate } from '../rows.js';

/** A worker as its heartbeat row says (`inbox.workers()`, `health().workers`). */
export interface WorkerInfo {
  /** Its `workerId`. */
  readonly id: string;
  /** The host it runs on (`os.hostname()`), `'unknown'` where there is none. */
  readonly host: string;
  /** Its process id (0 where there is none). */
  readonly pid: number;
  /** When it started (the database's clock). */
  readonly startedAt: Date;
  /** Its last heartbeat (the database's clock). */
  readonly lastSeenAt: Date;
  /** How often it beats, in ms. */
  readonly heartbeatMs: number;
  /** Its `concurrency`. */
  readonly concurrency: number;
  /** Its `order` option. */
  readonly order: 'none' | 'per-app';
  /** Handlers it was running at its last beat. */
  readonly running: number;
  /**
   * `false` once it has missed 3 beats: it was killed, crashed or lost the
   * database without `stop()`. Its row stays a day, then the next worker to start deletes it.
   */
  readonly live: boolean;
}

/** A worker whose last beat is older than this many of its beats is shown as gone. */
export const MISSED_BEATS = 3;

/** Gone rows stay this long for operators to see, then a starting worker deletes them. */
const GONE_KEPT = "interval '1 day'";

interface Process {
  pid?: number;
  env?: Record<string, string | undefined>;
  getBuiltinModule?: (name: string) => { hostname?: () => string } | undefined;
}

/** Host and pid without a static node: import (the inbox also runs on Bun, Deno and in browsers). */
function whereAmI(): { host: string; pid: number } {
  const process = (globalThis as { process?: Process }).process;
  let host: string | undefined;
  try {
    host = process?.getBuiltinModule?.('node:os')?.hostname?.();
  } catch {
    host = undefined;
  }
  return { host: host ?? process?.env?.['HOSTNAME'] ?? 'unknown', pid: process?.pid ?? 0 };
}

type HeartbeatSettings = Pick<WorkerInfo, 'heartbeatMs' | 'concurrency' | 'order'> & { readonly workerId: string };

/**
 * A worker's heartbeat row: announced at start, its `last_seen_at` moved every beat (one UPDATE
 * of one row), deleted on `stop()`. A beat that finds no row (deleted by hand) announces again.
 * Beats never overlap: the next is timed from the end of the last, so a slow database or a
 * single busy connection delays beats instead of queueing them.
 */
export class Heartbeat {
  #timer: (() => void) | undefined;
  #beating: Promise<void> | undefined;
  #stopped = false;
  readonly #sql: { announce: string; beat: string; sweep: string; leave: string };

  constructor(
    private readonly driver: Driver,
    names: TableNames,
    private readonly settings: HeartbeatSettings,
    private readonly running: () => number,
    private readonly after: (ms: number, fn: () => void) => () => void,
  ) {
    const w = names.workers;
    this.#sql = {
      announce: `INSERT INTO ${w} (id, host, pid, beat_ms, concurrency, mode, running) VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, started_at = now(), last_seen_at = now(),
  beat_ms = excluded.beat_ms, concurrency = excluded.concurrency, mode = excluded.mode, running = excluded.running`,
      beat: `UPDATE ${w} SET last_seen_at = now(), running = $2 WHERE id = $1 RETURNING id`,
      sweep: `DELETE FROM ${w} WHERE last_seen_at < now() - ${GONE_KEPT}`,
      leave: `DELETE FROM ${w} WHERE id = $1`,
    };
  }

  /** Announces the worker now, then beats every `heartbeatMs`. */
  start(): void {
    this.#run(true);
  }

  /** Stops beating and deletes the row (best effort: a database that is away leaves it to go stale). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.();
    await this.#beating;
    await this.driver.query(this.#sql.leave, [this.settings.workerId]).catch(() => {});
  }

  #run(announce: boolean): void {
    if (this.#stopped) return;
    this.#beating = this.#beat(announce)
      .catch(() => false) // the worker's own claims log the database being away, once per outage
      .then((ok) => {
        this.#beating = undefined;
        if (!this.#stopped) this.#timer = this.after(this.settings.heartbeatMs, () => this.#run(!ok));
      });
  }

  /** Resolves true when the row is there and fresh. */
  async #beat(announce: boolean): Promise<boolean> {
    const { workerId, heartbeatMs, concurrency, order } = this.settings;
    if (!announce) {
      const rows = await this.driver.query(this.#sql.beat, [workerId, this.running()]);
      if (rows.length > 0) return true;
    }
    const { host, pid } = whereAmI();
    await this.driver.query(this.#sql.announce, [workerId, host, pid, heartbeatMs, concurrency, order, this.running()]);
    if (announce) await this.driver.query(this.#sql.sweep).catch(() => {});
    return true;
  }
}

const WORKER_COLUMNS = `id, host, pid, started_at, last_seen_at, beat_ms, concurrency, mode, running,
  last_seen_at > now() - beat_ms * ${MISSED_BEATS} * interval '1 millisecond' AS live`;

function toWorkerInfo(row: Row): WorkerInfo {
  return {
    id: String(row['id']),
    host: String(row['host']),
    pid: Number(row['pid']),
    startedAt: toDate(row['started_at']),
    lastSeenAt: toDate(row['last_seen_at']),
    heartbeatMs: Number(row['beat_ms']),
    concurrency: Number(row['concurrency']),
    order: row['mode'] === 'per-app' ? 'per-app' : 'none',
    running: Number(row['running']),
    live: row['live'] === true,
  };
}

/** Every worker with a row: live ones first, then by when they were last seen, newest first. */
export async function listWorkers(driver: Driver, names: TableNames): Promise<WorkerInfo[]> {
  const rows = await failingAs(names.display, 'reading the workers', () =>
    driver.query(`SELECT ${WORKER_COLUMNS} FROM ${names.workers} ORDER BY live DESC, last_seen_at DESC, id`),
  );
  return rows.map(toWorkerInfo);
}
