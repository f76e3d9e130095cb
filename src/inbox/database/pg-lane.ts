import type { DriverTransaction, LaneTurn, Row, Statement, TransactionLane } from './driver.js';
import { beginWith, type PgQueryConfig } from './pg-opening.js';
import { checkIn, checkOut, committedOrThrow, type PgPoolClientLike, type PgPoolLike } from './pg-client.js';

/**
 * One connection for one worker slot's transactions, one after another: each transaction's
 * COMMIT is held until the next one begins, and goes out with that BEGIN and its opening
 * statement in one write. A worker's delivery is then one round trip and one system call (the
 * write each side makes was most of a worker's time in profiles, bench/README.md), not two; and
 * the connection is checked out once per run of deliveries, not once each.
 *
 * The held COMMIT is sent alone when no transaction follows within a turn of the event loop, and
 * when the lane closes. A transaction's promise settles only when its COMMIT has answered, so
 * nothing is reported done before it is. A COMMIT that fails ends its own transaction only: it
 * has its own Sync, and the BEGIN after it opens the next one (no ROLLBACK is sent for it, which
 * would end the next transaction instead).
 */
export class PgLane implements TransactionLane {
  #client: PgPoolClientLike | undefined;
  #broken = false;
  /** A finished transaction's COMMIT, waiting for the next BEGIN. */
  #held: { send: (committed: Promise<unknown>) => void } | undefined;
  #turn: Promise<void> = Promise.resolve();
  /** The last COMMIT sent: the connection is quiet once it has answered. */
  #lastCommit: Promise<unknown> | undefined;

  constructor(
    private readonly pool: PgPoolLike,
    private readonly config: (statement: Statement) => PgQueryConfig,
    private readonly rowsConfig: (text: string, params: readonly unknown[] | undefined) => string | PgQueryConfig,
  ) {}

  turn(): LaneTurn {
    let handOver!: () => void;
    const handedOver = new Promise<void>((resolve) => (handOver = resolve));
    const previous = this.#turn;
    this.#turn = handedOver;
    return {
      handedOver,
      transaction: async (fn, opening) => {
        try {
          await previous; // one transaction at a time on the connection: the one before has handed over
          return await this.#transaction(fn, opening, handOver);
        } finally {
          handOver();
        }
      },
      skip: handOver,
    };
  }

  /** Sends a held COMMIT, waits for it, and gives the connection back (out of the pool if it broke). */
  async close(): Promise<void> {
    await this.#turn;
    this.#flush();
    const client = this.#client;
    if (client === undefined) return;
    await this.#lastCommit?.catch(() => {});
    this.#client = undefined;
    checkIn(client, this.#broken);
  }

  async #transaction<R>(fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>, opening: Statement, handOver: () => void): Promise<R> {
    const client = (this.#client ??= await checkOut(this.pool));
    const onBroken = () => {
      this.#broken = true;
    };
    const held = this.#held;
    this.#held = undefined;
    let opened: Row[];
    try {
      opened = await beginWith(client, opening, this.config, true, held?.send);
    } catch (error) {
      await client.query('ROLLBACK').catch(onBroken);
      throw error;
    }
    const tx: DriverTransaction = { client, query: async (text, params) => (await client.query(this.rowsConfig(text, params))).rows };
    let result: R;
    try {
      result = await fn(tx, opened);
    } catch (error) {
      await client.query('ROLLBACK').catch(onBroken);
      throw error;
    }
    const committed = new Promise<unknown>((resolve, reject) => {
      this.#held = {
        send: (sent) => {
          this.#lastCommit = sent;
          sent.then(resolve, (error: unknown) => {
            // A COMMIT that failed may have lost the connection: it is not given back to the pool.
            this.#broken = true;
            reject(error);
          });
        },
      };
    });
    // The next transaction may begin now; if none does within this turn of the loop, COMMIT alone.
    handOver();
    setImmediate(() => this.#flush());
    committedOrThrow(await committed);
    return result;
  }

  #flush(): void {
    const held = this.#held;
    const client = this.#client;
    if (held === undefined || client === undefined) return;
    this.#held = undefined;
    held.send(client.query('COMMIT'));
  }
}
