import type { DriverTransaction, HandOver, LaneTurn, Row, Statement, TransactionLane } from './driver.js';
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
    let handOver!: (how: HandOver) => void;
    const handedOver = new Promise<HandOver>((resolve) => (handOver = resolve));
    const previous = this.#turn;
    this.#turn = handedOver.then(() => {});
    return {
      handedOver,
      transaction: async (fn, opening) => {
        try {
          await previous; // one transaction at a time on the connection: the one before has handed over
          return await this.#transaction(fn, opening, () => handOver('committing'));
        } finally {
          handOver('ended');
        }
      },
      skip: () => handOver('ended'),
    };
  }

  /** Sends a held COMMIT, waits for it, and gives the connection back (out of the pool if it broke). */
  async close(): Promise<void> {
    await this.#turn;
    await this.#release();
  }

  /** The held COMMIT sent and answered, then the connection back to the pool (destroyed if it broke). */
  async #release(): Promise<void> {
    this.#flush();
    const client = this.#client;
    if (client !== undefined) {
      await this.#lastCommit?.catch(() => {});
      this.#client = undefined;
      checkIn(client, this.#broken);
    }
    this.#broken = false;
  }

  /** The lane's connection: a new one when it has none, or when the one it had broke. */
  async #connection(): Promise<PgPoolClientLike> {
    if (this.#broken) await this.#release();
    return (this.#client ??= await checkOut(this.pool));
  }

  async #transaction<R>(fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>, opening: Statement, handOver: () => void): Promise<R> {
    const onBroken = () => {
      this.#broken = true;
    };
    let client: PgPoolClientLike;
    let opened: Row[];
    for (let attempt = 1; ; attempt++) {
      client = await this.#connection();
      const held = this.#held;
      this.#held = undefined;
      try {
        opened = await beginWith(client, opening, this.config, true, held?.send);
        break;
      } catch (error) {
        await client.query('ROLLBACK').catch(onBroken);
        // Written behind the COMMIT of a connection that then broke: nothing of this transaction
        // committed and no handler ran, so it opens once more on a new connection rather than
        // failing a delivery for the one before.
        if (!(this.#broken && held !== undefined && attempt === 1)) throw error;
      }
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
            // A COMMIT that failed may have lost the connection: the next transaction takes a new one.
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
