/**
 * The few things the inbox asks of a database client. Each supported client (pg, postgres.js,
 * PGlite) gets a small driver that speaks this; the inbox's SQL is the same for all three.
 */
export type Row = Record<string, unknown>;

export interface Queryable {
  /** One statement with `$1`-style parameters; resolves with the rows. */
  query(text: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** A statement with its parameters. */
export interface Statement {
  readonly text: string;
  readonly params: readonly unknown[];
}

export interface DriverTransaction extends Queryable {
  /** The user-facing client inside this transaction: the same kind as the database passed in. */
  readonly client: unknown;
}

export interface Driver extends Queryable {
  readonly kind: 'pg' | 'postgres' | 'pglite';
  /**
   * Runs `fn` inside BEGIN/COMMIT; rolls back when it throws. `opening`, when given, is the
   * transaction's first statement and `fn` gets its rows: a pg driver sends it with the BEGIN, in
   * one round trip (see pg-opening.ts).
   */
  transaction<R>(fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>, opening?: Statement): Promise<R>;
  /**
   * A connection kept for one worker slot's transactions (pg pools): see pg-lane.ts. Absent where
   * the client has no faster way than `transaction()`.
   */
  lane?(): TransactionLane;
  /** Subscribes to NOTIFY on a channel. Resolves with a function that unsubscribes. */
  listen(channel: string, onNotify: () => void, onError: (error: unknown) => void): Promise<() => Promise<void>>;
  /** How many transactions can run at once: a single connection serialises everything. */
  readonly parallel: boolean;
  /** The pool's size where the client says (pg `max`, postgres.js `max`); undefined when unknown. */
  readonly maxConnections: number | undefined;
  /** The option that sets `maxConnections`, as an error names it; `max` (pg, postgres.js) when absent. */
  readonly sizedBy?: string;
}

/** Transactions one after another on one connection, each COMMIT sent with the next BEGIN. */
export interface TransactionLane {
  /** The next transaction's place on the lane; turns run in the order they were taken. */
  turn(): LaneTurn;
  /** Sends what is held, waits for it, and gives the connection back. */
  close(): Promise<void>;
}

export type HandOver = 'committing' | 'ended';

export interface LaneTurn {
  /** As `Driver.transaction`; resolves or rejects once its COMMIT has answered. At most once per turn. */
  transaction<R>(fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>, opening: Statement): Promise<R>;
  /**
   * Resolves once the next turn may begin: `'committing'` when this turn's handlers are over and
   * its COMMIT is held for the next turn's BEGIN; `'ended'` when it rolled back, failed, or was skipped.
   */
  readonly handedOver: Promise<HandOver>;
  /** This turn will not use the lane (its delivery ended without a transaction): the next one may begin. */
  skip(): void;
}

/** Serialises async work: a single connection must not interleave a query into a transaction. */
export class Mutex {
  #tail: Promise<unknown> = Promise.resolve();

  run<R>(fn: () => Promise<R>): Promise<R> {
    const result = this.#tail.then(fn, fn);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

/** `fn` with `opening` sent first inside the transaction: for drivers that have no faster way. */
export function openingFirst<R>(
  fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>,
  opening: Statement | undefined,
): (tx: DriverTransaction) => Promise<R> {
  return async (tx) => fn(tx, opening === undefined ? [] : await tx.query(opening.text, opening.params));
}
