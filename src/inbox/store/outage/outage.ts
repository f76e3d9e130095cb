import type { ReceiverLogRecord } from '../../../receiver/types.js';
import type { ResolvedStoreRetry } from './options.js';

export type OutageLog = (record: ReceiverLogRecord) => void;

/**
 * The cause of an outage no attempt reported: a delivery reached its bound with its attempt (or
 * the attempts ahead of it) still unanswered, or the deliveries held without an answer filled the cap.
 */
export const NO_ANSWER = 'no_answer';

interface Current {
  readonly startedAt: number;
  readonly cause: string;
  waited: number;
  refused: number;
  /** A store succeeded since the last failure: the outage ends when nothing waits any more. */
  reachable: boolean;
}

/**
 * One inbox's view of its database being away: the deliveries waiting for it, and the two log
 * records of an outage (its start, its end), whatever the number of deliveries and retries in
 * between. What they hold is counted for the whole process (held.ts).
 */
export class Outage {
  #current: Current | undefined;
  #waiting = 0;

  /** `now`: milliseconds on a monotonic clock (the inbox's), from which an outage's duration is told. */
  constructor(
    private readonly retry: ResolvedStoreRetry,
    private readonly now: () => number,
  ) {}

  /** The cause of the outage under way, if one is. */
  get cause(): string | undefined {
    return this.#current?.cause;
  }

  /** A delivery waits for the database: its store failed for a reason that can pass, or it reached its bound unanswered. */
  enter(cause: string, log: OutageLog | undefined): void {
    const current = this.#begin(cause, log);
    current.reachable = false;
    this.#waiting++;
    current.waited++;
  }

  /** A delivery refused at its arrival: what the deliveries held already would go past the cap with it. */
  refusedAtOnce(log: OutageLog | undefined): void {
    this.#begin(NO_ANSWER, log).refused++;
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
  leave(refused: boolean, log: OutageLog | undefined): void {
    this.#waiting--;
    if (refused && this.#current !== undefined) this.#current.refused++;
    this.#endIfOver(log);
  }

  #begin(cause: string, log: OutageLog | undefined): Current {
    if (this.#current !== undefined) return this.#current;
    const current: Current = { startedAt: this.now(), cause, waited: 0, refused: 0, reachable: false };
    this.#current = current;
    log?.({
      level: 'warn',
      event: 'inbox_outage',
      message:
        `the inbox database cannot be reached (${cause}): verified deliveries wait for it, each up to ` +
        `${this.retry.maxWaitMs} ms from its arrival, all those the process holds at most ${this.retry.maxBufferedBytes} bytes, before 503`,
      code: cause,
      durationMs: 0,
    });
    return current;
  }

  #endIfOver(log: OutageLog | undefined): void {
    const current = this.#current;
    if (current === undefined || !current.reachable || this.#waiting > 0) return;
    this.#current = undefined;
    const lasted = this.now() - current.startedAt;
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
