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
   * As `transaction()`, for a worker's transactions one after another (pg pools: pg-lane.ts): its
   * COMMIT may wait for the next chained transaction's BEGIN and go with it on the same connection.
   * `handedOver` is called once `fn` has returned and its COMMIT waits: the caller may begin the
   * next. Resolves or rejects only once its COMMIT has answered. Absent where the client has no
   * faster way than `transaction()`.
   */
  chained?<R>(fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>, opening: Statement, handedOver: () => void): Promise<R>;
  /** Subscribes to NOTIFY on a channel. Resolves with a function that unsubscribes. */
  listen(channel: string, onNotify: () => void, onError: (error: unknown) => void): Promise<() => Promise<void>>;
  /** How many transactions can run at once: a single connection serialises everything. */
  readonly parallel: boolean;
  /** The pool's size where the client says (pg `max`, postgres.js `max`); undefined when unknown. */
  readonly maxConnections: number | undefined;
  /** The option that sets `maxConnections`, as an error names it; `max` (pg, postgres.js) when absent. */
  readonly sizedBy?: string;
}

/** Whether `value` has a method of each name: how a client handed over is told apart (none of them is imported). */
export function hasMethods(value: unknown, names: readonly string[]): boolean {
  return names.every((name) => typeof (value as Record<string, unknown> | null)?.[name] === 'function');
}

/** Serialises async work: a single connection must not interleave a query into a transaction. */
export class Mutex {
  #tail: Promise<unknown> = Promise.resolve();

  run<R>(fn: () => Promise<R>): Promise<R> {
    const result = this.#tail.then(fn, fn);
    this.#tail = result.catch(() => {});
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
