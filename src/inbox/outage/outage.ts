import type { ReceiverLogRecord } from '../../receiver/types.js';
import type { ResolvedStoreRetry } from './options.js';

export type OutageLog = (record: ReceiverLogRecord) => void;

interface Current {
  readonly startedAt: number;
  readonly cause: string;
  waited: number;
  refused: number;
  /** A store succeeded since the last failure: the outage ends when nothing waits any more. */
  reachable: boolean;
}

/**
 * One inbox's view of its database being away: the deliveries waiting for it and the bytes they
 * hold, and the two log records of an outage (its start, its end), whatever the number of
 * deliveries and retries in between.
 */
export class Outage {
  readonly #retry: ResolvedStoreRetry;
  readonly #now: () => number;
  #current: Current | undefined;
  #waiting = 0;
  #bufferedBytes = 0;

  constructor(retry: ResolvedStoreRetry, now: () => number = Date.now) {
    this.#retry = retry;
    this.#now = now;
  }

  /** The cause of the outage under way, if one is. */
  get cause(): string | undefined {
    return this.#current?.cause;
  }

  get bufferedBytes(): number {
    return this.#bufferedBytes;
  }

  /** A delivery's store failed for a reason that can pass: it waits, unless its bytes would go past the cap. */
  enter(bytes: number, cause: string, log: OutageLog | undefined): boolean {
    const current = this.#begin(cause, log);
    current.reachable = false;
    if (this.#bufferedBytes + bytes > this.#retry.maxBufferedBytes) {
      current.refused++;
      return false;
    }
    this.#waiting++;
    this.#bufferedBytes += bytes;
    current.waited++;
    return true;
  }

  /** A later attempt of a waiting delivery failed again. */
  failedAgain(): void {
    if (this.#current !== undefined) this.#current.reachable = false;
  }

  /** Any store that reached the database: the outage ends once no delivery waits. */
  succeeded(log: OutageLog | undefined): void {
    if (this.#current === undefined) return;
    this.#current.reachable = true;
    this.#endIfOver(log);
  }

  /** A waiting delivery leaves: stored, refused past the bound, or refused for good. */
  leave(bytes: number, refused: boolean, log: OutageLog | undefined): void {
    this.#waiting--;
    this.#bufferedBytes -= bytes;
    if (refused && this.#current !== undefined) this.#current.refused++;
    this.#endIfOver(log);
  }

  #begin(cause: string, log: OutageLog | undefined): Current {
    if (this.#current !== undefined) return this.#current;
    const current: Current = { startedAt: this.#now(), cause, waited: 0, refused: 0, reachable: false };
    this.#current = current;
    log?.({
      level: 'warn',
      event: 'inbox_outage',
      message:
        `the inbox database cannot be reached (${cause}): verified deliveries wait for it, each up to ` +
        `${this.#retry.maxWaitMs} ms, holding at most ${this.#retry.maxBufferedBytes} bytes, before 503`,
      code: cause,
      durationMs: 0,
    });
    return current;
  }

  #endIfOver(log: OutageLog | undefined): void {
    const current = this.#current;
    if (current === undefined || !current.reachable || this.#waiting > 0) return;
    this.#current = undefined;
    const lasted = this.#now() - current.startedAt;
    const lost = current.refused > 0;
    log?.({
      level: lost ? 'error' : 'info',
      event: 'inbox_outage_ended',
      message:
        `the inbox database is reachable again after ${lasted} ms (${current.cause}): ${current.waited} ` +
        `deliveries waited for it, ${current.refused} were refused with 503` +
        (lost ? ' and will not be sent again by the rack' : ''),
      code: current.cause,
      waited: current.waited,
      refused: current.refused,
      durationMs: lasted,
    });
  }
}
