import type { Clock } from '../clock.js';
import type { Driver } from '../../database/driver.js';
import { inboxError } from '../../database/errors.js';
import type { TableNames } from '../schema/table-name.js';
import { toDate } from '../rows.js';

/** Refusals of one code, as `inbox.refusals()` and `health()` sum them. */
export interface RefusalCount {
  /** The refusal's error code: `signature_mismatch`, `timestamp_too_old`, `invalid_json`, `payload_too_large`, ... */
  readonly code: string;
  /** How many deliveries were refused with it. */
  readonly count: number;
}

/** Options of `inbox.refusals()`. */
export interface RefusalQuery {
  /**
   * Count refusals from this minute on.
   *
   * @defaultValue an hour ago
   */
  since?: Date;
  /** `true`: one entry per minute and code, oldest first, instead of one per code. */
  perMinute?: boolean;
}

/** One minute's refusals of one code (`refusals({ perMinute: true })`). */
export interface RefusalMinute extends RefusalCount {
  /** The minute (its first millisecond, the receiving process's clock). */
  readonly minute: Date;
}

/** Called once per refused delivery, in the process that refused it (e.g. for an OpenTelemetry counter). */
export type RefusalListener = (code: string) => void;

/** How often counted refusals are written, in ms; a refusal waits at most this long in memory. */
export const REFUSAL_FLUSH_MS = 5_000;
/** Distinct (minute, code) pairs held while the database is away; past it, new pairs are dropped. */
const MAX_PENDING_KEYS = 10_000;
const MINUTE_MS = 60_000;
// The SDK's codes are short words; anything else is cut so that a row stays small.
const MAX_CODE_LENGTH = 64;

/**
 * Counts refusals per minute and code in memory and adds them to `<table>_refusals` in one
 * upsert every {@link REFUSAL_FLUSH_MS}: a flood of forged requests costs one small write every
 * few seconds per process, never one per request. Nothing of the request is kept but its code.
 * A write that fails puts its counts back for the next one.
 */
export class RefusalRecorder {
  /** The counts not written yet, by `minute code`: `m` the minute's first ms, `c` the code, `n` the count. */
  readonly #pending = new Map<string, { m: number; c: string; n: number }>();
  readonly #totals = new Map<string, number>();
  readonly #listeners = new Set<RefusalListener>();
  #timer: (() => void) | undefined;
  #flushing: Promise<void> | undefined;
  readonly #sql: string;

  constructor(
    private readonly driver: Driver,
    names: TableNames,
    private readonly flushMs: number,
    private readonly clock: Clock,
  ) {
    const r = names.refusals;
    // Aggregated in memory already, so one key appears once per statement (ON CONFLICT needs that).
    this.#sql = `INSERT INTO ${r} (minute, code, count)
SELECT to_timestamp(m / 1000.0), c, n FROM json_to_recordset($1::text::json) AS x(m bigint, c text, n bigint)
ON CONFLICT (minute, code) DO UPDATE SET count = ${r}.count + excluded.count`;
  }

  /** One refused delivery. Synchronous and allocation-light: it runs on the refusal path. */
  count(code: string): void {
    const text = typeof code === 'string' && code !== '' ? code.slice(0, MAX_CODE_LENGTH) : 'unknown';
    const minute = Math.floor(this.clock.date().getTime() / MINUTE_MS) * MINUTE_MS;
    this.#hold(minute, text, 1);
    this.#totals.set(text, (this.#totals.get(text) ?? 0) + 1);
    for (const listener of this.#listeners) {
      try {
        listener(text);
      } catch {
        // A broken listener must not break the receiver's answer.
      }
    }
    this.#arm();
  }

  /** Adds `n` to a minute and code held for the next write; past {@link MAX_PENDING_KEYS} pairs, a new one is dropped. */
  #hold(m: number, c: string, n: number): void {
    const held = this.#pending.get(`${m} ${c}`);
    if (held !== undefined) held.n += n;
    else if (this.#pending.size < MAX_PENDING_KEYS) this.#pending.set(`${m} ${c}`, { m, c, n });
  }

  /** Refusals counted by this process since it started, per code (monotonic: an OpenTelemetry observable counter). */
  totals(): ReadonlyMap<string, number> {
    return new Map(this.#totals);
  }

  subscribe(listener: RefusalListener): () => void {
    if (typeof listener !== 'function') throw new TypeError('onRefusal expects a function (code: string) => void');
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Writes what is counted now (one statement), after a flush under way. Never rejects. */
  async flush(): Promise<void> {
    while (this.#flushing !== undefined) await this.#flushing;
    if (this.#pending.size === 0) return;
    const batch = [...this.#pending.values()];
    this.#pending.clear();
    this.#flushing = this.driver
      .query(this.#sql, [JSON.stringify(batch)])
      .then(
        () => undefined,
        () => {
          // Back into memory for the next write; the timer runs again.
          for (const { m, c, n } of batch) this.#hold(m, c, n);
          this.#arm();
        },
      )
      .finally(() => {
        this.#flushing = undefined;
      });
    await this.#flushing;
  }

  /** A flush in `flushMs`, unless one is set already. The timer never holds the process open: close() writes what is left. */
  #arm(): void {
    this.#timer ??= this.clock.after(
      this.flushMs,
      () => {
        this.#timer = undefined;
        void this.flush();
      },
      false,
    );
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    this.#timer?.();
    this.#timer = undefined;
    await this.flush();
    // A failed last write re-armed the timer: nothing more will run it.
    (this.#timer as (() => void) | undefined)?.();
    this.#timer = undefined;
  }
}

/** Refusals recorded in the table (every process), per code or per minute and code. */
export async function readRefusals(
  driver: Driver,
  names: TableNames,
  query: RefusalQuery = {},
  clock: Clock,
): Promise<RefusalMinute[] | RefusalCount[]> {
  const since = query.since ?? new Date(clock.date().getTime() - 60 * MINUTE_MS);
  if (!(since instanceof Date) || Number.isNaN(since.getTime())) throw new TypeError('refusals({ since }) expects a valid Date');
  const sinceMinute = new Date(Math.floor(since.getTime() / MINUTE_MS) * MINUTE_MS);
  try {
    if (query.perMinute === true) {
      const rows = await driver.query(
        `SELECT minute, code, count::float8 AS n FROM ${names.refusals} WHERE minute >= $1 ORDER BY minute, code`,
        [sinceMinute.toISOString()],
      );
      return rows.map((row) => ({ minute: toDate(row['minute']), code: String(row['code']), count: Number(row['n']) }));
    }
    const rows = await driver.query(
      `SELECT code, sum(count)::float8 AS n FROM ${names.refusals} WHERE minute >= $1 GROUP BY code ORDER BY n DESC, code`,
      [sinceMinute.toISOString()],
    );
    return rows.map((row) => ({ code: String(row['code']), count: Number(row['n']) }));
  } catch (error) {
    throw inboxError(error, names.display, 'reading refusals');
  }
}
