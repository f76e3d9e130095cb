import type { Clock } from './clock.js';
import type { Driver } from '../database/driver.js';

/**
 * Wakes workers when a delivery is stored. In this process: at once, through a callback. In other
 * processes: through NOTIFY, coalesced so that a burst of stored deliveries sends one notification
 * per event-loop turn rather than one per delivery (NOTIFY serialises commits in PostgreSQL).
 */
const NOTIFY_COALESCE_MS = 10;

export class Wake {
  readonly #local = new Set<() => void>();
  #notifyScheduled = false;
  #unlisten: (() => Promise<void>) | undefined;
  #listening: Promise<void> | undefined;

  constructor(
    private readonly driver: Driver,
    private readonly channel: string,
    private readonly notify: boolean,
    private readonly clock: Clock,
  ) {}

  /** A pending delivery was stored by this process. */
  stored(): void {
    this.#wakeLocal();
    if (!this.notify || this.#notifyScheduled) return;
    this.#notifyScheduled = true;
    // One NOTIFY per 10 ms at most: each serialises commits, and a burst needs only one wake-up.
    // Holds the process open until it is sent, as a plain setTimeout did.
    this.clock.after(
      NOTIFY_COALESCE_MS,
      () => {
        this.#notifyScheduled = false;
        void this.#sendNotify();
      },
      true,
    );
  }

  /**
   * Rows became due by an operation (retry, replay): wake local workers and NOTIFY at once,
   * awaited, so that a short-lived process (a script, the CLI) does not exit before it is sent.
   */
  async requeued(): Promise<void> {
    this.#wakeLocal();
    if (this.notify) await this.#sendNotify();
  }

  /** Registers a worker's wake-up; the first one starts listening. Returns the unsubscribe. */
  subscribe(wake: () => void, onListenError: (error: unknown) => void): () => Promise<void> {
    this.#local.add(wake);
    this.relisten(onListenError);
    return async () => {
      this.#local.delete(wake);
      // Awaited by stop(), so that `await worker.stop(); await pool.end()` never races the LISTEN client.
      if (this.#local.size === 0) await this.#stopListening();
    };
  }

  /** Called on every poll too: a LISTEN lost with its connection is set up again. */
  relisten(onListenError: (error: unknown) => void): void {
    if (this.#listening !== undefined || this.#local.size === 0) return;
    this.#listening = this.driver
      .listen(
        this.channel,
        () => this.#wakeLocal(),
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

  #wakeLocal(): void {
    for (const wake of this.#local) wake();
  }

  /** Best effort: a lost notification costs one poll interval, never a delivery. */
  async #sendNotify(): Promise<void> {
    await this.driver.query("SELECT pg_notify($1, '')", [this.channel]).catch(() => {});
  }

  async #stopListening(): Promise<void> {
    await this.#listening;
    const unlisten = this.#unlisten;
    this.#unlisten = undefined;
    this.#listening = undefined;
    await unlisten?.().catch(() => {});
  }
}
