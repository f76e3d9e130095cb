import type { Row } from './driver.js';

/** A statement as pg takes it: a name (planned once per connection) or none, and its values as parameters. */
export interface PgQueryConfig {
  name?: string;
  text: string;
  values?: readonly unknown[];
}

/** The part of pg's connection a custom query (pg's `Submittable`, as pg-cursor's) writes through: the extended protocol's messages. */
interface PgWire {
  parse(message: { text: string; name?: string }): void;
  bind(message: { statement?: string; values?: readonly unknown[]; binary?: boolean }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal?: string; rows?: number }): void;
  sync(): void;
}

interface Field {
  readonly name: string;
  readonly dataTypeID: number;
  readonly format?: string;
}

/** What a real pg client has that this needs besides `query`: its type parsers (`client.getTypeParser`, pg's public API). */
export interface PgExchangeClient {
  query(submittable: OpeningExchange): unknown;
  getTypeParser(oid: number, format?: string): (raw: string) => unknown;
}

/** A command's answer, as pg's own result carries it where committedOrThrow reads it. */
export interface CommandAnswer {
  readonly command: string;
  readonly rows: Row[];
}

/** How far an exchange got: the held COMMIT's answer (when it was sent and answered), then BEGIN's and the opening's. */
export interface ExchangeResult {
  readonly committed: CommandAnswer | undefined;
  readonly rows: Row[];
}

export class ExchangeError extends Error {
  constructor(
    readonly reason: unknown,
    /** The held COMMIT had answered before the failure (it committed, or answered ROLLBACK). */
    readonly committed: CommandAnswer | undefined,
  ) {
    super(reason instanceof Error ? reason.message : String(reason));
  }
}

/**
 * One exchange with the server, written before any answer comes back: a held COMMIT (when there
 * is one), BEGIN and the transaction's opening statement with its values bound, as the extended
 * protocol's messages with one Sync at the end: one round trip, on any pg client, through pg's
 * public `Submittable` (what pg-cursor and pg-query-stream hand to `client.query`). Nothing of pg
 * is switched and no socket touched; pg queues it as one query.
 *
 * Without a Sync between them, the server runs the three in order and stops at the first error
 * until the Sync: a COMMIT that failed skips BEGIN and the opening (nothing of this transaction
 * ran); BEGIN that ran leaves the transaction open and aborted when the opening failed, and the
 * caller rolls it back, as after any failed opening. pg hands the answers to this object: the
 * COMMIT's command tag (COMMIT, or ROLLBACK when a statement in its transaction had failed), BEGIN's,
 * then the opening's rows, parsed by the client's own type parsers.
 */
export class OpeningExchange {
  readonly #answers: CommandAnswer[] = [];
  #fields: readonly Field[] = [];
  #rows: Row[] = [];
  #failure: unknown;
  readonly result: Promise<ExchangeResult>;
  #resolve!: (result: ExchangeResult) => void;
  #reject!: (error: ExchangeError) => void;

  constructor(
    private readonly client: PgExchangeClient,
    private readonly opening: PgQueryConfig,
    private readonly commitFirst: boolean,
  ) {
    this.result = new Promise<ExchangeResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  submit(connection: PgWire): Error | null {
    const { name, text, values } = this.opening;
    // A named statement comes here only once pg's own query has parsed it on this connection
    // (pg-opening.ts keeps that record): it is only bound. An unnamed one is parsed here.
    const statement = name ?? '';
    if (this.commitFirst) oneCommand(connection, 'COMMIT');
    oneCommand(connection, 'BEGIN');
    if (statement === '') connection.parse({ text });
    connection.bind({ statement, values: (values ?? []).map(asText) });
    connection.describe({ type: 'P', name: '' });
    connection.execute({});
    connection.sync();
    return null;
  }

  handleRowDescription(message: { fields: readonly Field[] }): void {
    this.#fields = message.fields;
  }

  handleDataRow(message: { fields: readonly (string | null)[] }): void {
    if (this.#failure !== undefined) return;
    try {
      const row: Row = {};
      this.#fields.forEach((field, i) => {
        const raw = message.fields[i];
        row[field.name] =
          raw === null || raw === undefined ? null : this.client.getTypeParser(field.dataTypeID, field.format ?? 'text')(raw);
      });
      this.#rows.push(row);
    } catch (error) {
      this.#failure = error;
    }
  }

  handleCommandComplete(message: { text: string }): void {
    this.#answers.push({ command: message.text.split(' ', 1)[0]!, rows: [] });
  }

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  /** The first of it or handleError settles `result`: a promise settles once. */
  handleReadyForQuery(): void {
    if (this.#failure !== undefined) this.handleError(this.#failure);
    else this.#resolve({ committed: this.#committed(), rows: this.#rows });
  }

  /** A server's error (it skipped the rest until the Sync), a lost connection, or pg's query_timeout. */
  handleError(error: unknown): void {
    this.#reject(new ExchangeError(error, this.#committed()));
  }

  #committed(): CommandAnswer | undefined {
    return this.commitFirst ? this.#answers[0] : undefined;
  }
}

/** A value as pg writes it (its prepareValue): null, or text. Only plain values come here (pg-opening.ts). */
const asText = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

/** A constant command with no values: parsed, bound and run unnamed, no rows described. */
function oneCommand(connection: PgWire, text: string): void {
  connection.parse({ text });
  connection.bind({});
  connection.execute({});
}
