import type { DriverTransaction, Row, Statement } from './driver.js';
import { beginWith, type PgQueryConfig } from './pg-opening.js';
import { checkIn, checkOut, committedOrThrow, type PgPoolClientLike, type PgPoolLike } from './pg-client.js';

/** The most transactions one connection chains before it goes back to the pool, so that a pool's maxUses and maxLifetimeSeconds still see it. */
const CHAIN_LENGTH = 100;

type Config = (statement: Statement) => PgQueryConfig;
type RowsConfig = (text: string, params: readonly unknown[] | undefined) => string | PgQueryConfig;

/**
 * A pg pool driver's chained transactions (`Driver.chained`): a worker's transactions, each
 * COMMIT held until the next one begins and sent with that BEGIN and its opening statement, in one
 * round trip (pipelined, or as one exchange of the extended protocol: pg-opening.ts). A worker's
 * delivery then costs one round trip, not three, and a connection is checked out once per
 * chain of deliveries, not once each (the write each side makes was most of a worker's time in
 * profiles, bench/README.md).
 *
 * A lane whose COMMIT is held waits a turn of the event loop for the next transaction; with none,
 * the COMMIT goes alone and the connection back to the pool. A transaction's promise settles only
 * when its COMMIT has answered, so nothing is reported done before it is. A COMMIT that fails ends
 * its own transaction only (no ROLLBACK is sent for it, which would end the next one instead).
 */
export class PgLanes {
  /** Lanes whose COMMIT is held, for the next transaction to take. */
  readonly #waiting: PgLane[] = [];

  constructor(
    private readonly pool: PgPoolLike,
    private readonly config: Config,
    private readonly rowsConfig: RowsConfig,
  ) {}

  async transaction<R>(fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>, opening: Statement, handedOver: () => void): Promise<R> {
    const lane = this.#waiting.pop() ?? new PgLane(this.pool, this.config, this.rowsConfig);
    let held = false;
    try {
      return await lane.transaction(fn, opening, () => {
        held = true;
        if (lane.chained >= CHAIN_LENGTH) lane.commitAlone();
        else {
          this.#waiting.push(lane);
          // After the I/O callbacks of this turn.
          setImmediate(() => {
            const at = this.#waiting.indexOf(lane);
            if (at < 0) return; // the next transaction took it
            this.#waiting.splice(at, 1);
            lane.commitAlone();
          });
        }
        handedOver();
      });
    } finally {
      // Rolled back or failed before its COMMIT: the connection goes back (broken ones out of the pool).
      if (!held) lane.checkIn();
    }
  }
}

/** One connection's transactions, one after another. */
class PgLane {
  #client: PgPoolClientLike | undefined;
  #broken = false;
  /** A finished transaction's COMMIT, waiting for the next BEGIN. */
  #held: { send: (committed: Promise<unknown>) => void } | undefined;
  /** Transactions run on this connection. */
  chained = 0;

  constructor(
    private readonly pool: PgPoolLike,
    private readonly config: Config,
    private readonly rowsConfig: RowsConfig,
  ) {}

  /** The held COMMIT sent alone; its connection back to the pool once it has answered (the lane takes a new one next). */
  commitAlone(): void {
    const held = this.#held;
    const client = this.#client;
    if (held === undefined || client === undefined) return;
    const broken = this.#broken;
    this.#held = undefined;
    this.#client = undefined;
    this.#broken = false;
    held.send(
      client.query('COMMIT').then(
        (result) => (checkIn(client, broken), result),
        (error: unknown) => {
          checkIn(client, true);
          throw error;
        },
      ),
    );
  }

  /** Back to the pool (out of it if it broke); the next transaction on this lane takes a new one. */
  checkIn(): void {
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) checkIn(client, this.#broken);
    this.#broken = false;
  }

  async transaction<R>(fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>, opening: Statement, handOver: () => void): Promise<R> {
    const onBroken = () => {
      this.#broken = true;
    };
    let client: PgPoolClientLike;
    let opened: Row[];
    for (let attempt = 1; ; attempt++) {
      // A broken connection's held COMMIT goes alone on it (its transaction is there), then a new one.
      if (this.#broken && this.#held !== undefined) this.commitAlone();
      else if (this.#broken) this.checkIn();
      client = this.#client ??= await checkOut(this.pool);
      const held = this.#held;
      this.#held = undefined;
      try {
        opened = await beginWith(client, opening, this.config, held?.send);
        break;
      } catch (error) {
        await client.query('ROLLBACK').catch(onBroken);
        // Written behind the COMMIT of a connection that then broke: nothing of this transaction
        // committed and no handler ran, so it opens once more on a new connection rather than
        // failing a delivery for the one before.
        if (!(this.#broken && held !== undefined && attempt === 1)) throw error;
      }
    }
    this.chained++;
    const tx: DriverTransaction = { client, query: async (text, params) => (await client.query(this.rowsConfig(text, params))).rows };
    // Inline, not rollingBack(): this is every delivery's path, and a helper costs it a promise turn.
    let result: R;
    try {
      result = await fn(tx, opened);
    } catch (error) {
      await client.query('ROLLBACK').catch(onBroken);
      throw error;
    }
    const committed = new Promise<unknown>((resolve, reject) => {
      this.#held = {
        send: (sent) =>
          sent.then(resolve, (error: unknown) => {
            // A COMMIT that failed may have lost the connection: the next transaction takes a new one.
            this.#broken = true;
            reject(error);
          }),
      };
    });
    handOver();
    committedOrThrow(await committed);
    return result;
  }
}
