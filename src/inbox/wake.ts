import type { Clock } from './clock.js';
import type { Driver } from '../database/driver.js';

/**
 * Wakes workers when a delivery is stored. In this process: at once, through a callback. In other
 * processes: through NOTIFY, coalesced so that a burst of stored deliveries sends one notification
 * per event-loop turn rather than one per delivery (NOTIFY serialises commits in PostgreSQL).
 */
const NOTIFY_COALESCE_MS = 10;

export class Wake {
  readonly #driver: Driver;
  readonly #channel: string;
  readonly #notify: boolean;
  readonly #clock: Clock;
  readonly #local = new Set<() => void>();
  #notifyScheduled = false;
  #unlisten: (() => Promise<void>) | undefined;
  #listening: Promise<void> | undefined;

  constructor(driver: Driver, channel: string, notify: boolean, clock: Clock) {
    this.#driver = driver;
    this.#clock = clock;
    this.#channel = channel;
    this.#notify = notify;
  }

  /** A pending delivery was stored by this process. */
  stored(): void {
    for (const wake of this.#local) wake();
    if (!this.#notify || this.#notifyScheduled) return;
    this.#notifyScheduled = true;
    // One NOTIFY per 10 ms at most: each serialises commits, and a burst needs only one wake-up.
    // Holds the process open until it is sent, as a plain setTimeout did.
    this.#clock.after(
      NOTIFY_COALESCE_MS,
      () => {
        this.#notifyScheduled = false;
        // Best effort: a lost notification costs one poll interval, never a delivery.
        this.#driver.query("SELECT pg_notify($1, '')", [this.#channel]).catch(() => {});
      },
      true,
    );
  }

  /**
   * Rows became due by an operation (retry, replay): wake local workers and NOTIFY at once,
   * awaited, so that a short-lived process (a script, the CLI) does not exit before it is sent.
   */
  async requeued(): Promise<void> {
    for (const wake of this.#local) wake();
    if (!this.#notify) return;
    // Best effort: a lost notification costs one poll interval, never a delivery.
    await this.#driver.query("SELECT pg_notify($1, '')", [this.#channel]).catch(() => {});
  }

  /** Registers a worker's wake-up; the first one starts listening. Returns the unsubscribe. */
  subscribe(wake: () => void, onListenError: (error: unknown) => void): () => Promise<void> {
    this.#local.add(wake);
    this.#ensureListening(onListenError);
    return async () => {
      this.#local.delete(wake);
      // Awaited by stop(), so that `await worker.stop(); await pool.end()` never races the LISTEN client.
      if (this.#local.size === 0) await this.#stopListening();
    };
  }

  /** Called on every poll too: a LISTEN lost with its connection is set up again. */
  #ensureListening(onListenError: (error: unknown) => void): void {
    if (this.#listening !== undefined || this.#local.size === 0) return;
    this.#listening = this.#driver
      .listen(
        this.#channel,
        () => {
          for (const wake of this.#local) wake();
        },
        (error) => {
          this.#unlisten = undefined;
          this.#listening = undefined;
          onListenError(error);
        },
      )
      .then(
        (unlisten) => {
          if (this.#local.size === 0) void unlisten();
          else this.#unlisten = unlisten;
        },
        (error: unknown) => {
          this.#listening = undefined;
          onListenError(error);
        },
      );
  }

  relisten(onListenError: (error: unknown) => void): void {
    this.#ensureListening(onListenError);
  }

  async #stopListening(): Promise<void> {
    await this.#listening;
    const unlisten = this.#unlisten;
    this.#unlisten = undefined;
    this.#listening = undefined;
    await unlisten?.().catch(() => {});
  }
}
