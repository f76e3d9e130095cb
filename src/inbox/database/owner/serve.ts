/**
 * The owner serves its PGlite to other processes and threads on the directory's socket, over the
 * PostgreSQL wire protocol, so `pg` connects to it as to any server (host: the directory). PGlite is
 * one session: each guest gets it exclusively from its first message until PGlite is idle again
 * (ReadyForQuery 'I'), so a guest's transaction never interleaves with the owner's or another
 * guest's. The owner's own queries queue behind it as they queue behind each other.
 *
 * What the shared session cannot give each guest on its own is refused: LISTEN and UNLISTEN (they
 * would change what the owner listens to), so guests poll. A NOTIFY a guest's statement raises
 * reaches the owner's listeners (PGlite hands them over itself) and is taken out of the guest's
 * answer, which never asked for it. A guest that goes away mid-transaction is rolled back; one that holds
 * the session idle in a transaction for `idleInTransactionMs` is cut off and rolled back.
 */
import type * as NodeNet from 'node:net';
import {
  concat,
  errorResponse,
  message,
  messageLength,
  query,
  readAnswer,
  readStartup,
  readyForQuery,
  sessionReady,
  startupLength,
  statementText,
} from './wire.js';
import type { TransactionStatus } from './wire.js';

/** The parts of PGlite the owner's socket uses, typed structurally (an optional peer). */
export interface ServablePGlite {
  execProtocolRaw(message: Uint8Array, options?: { syncToFs?: boolean }): Promise<Uint8Array>;
  query(text: string, params?: readonly unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** PGlite's own transaction queue: held too, so no owner transaction is open while a guest runs. */
  _runExclusiveTransaction?<T>(fn: () => Promise<T>): Promise<T>;
  _runExclusiveQuery?<T>(fn: () => Promise<T>): Promise<T>;
}

export interface ServeOptions {
  readonly idleInTransactionMs?: number;
  /** How long close() lets a guest finish the statement or transaction it is in before cutting it off. */
  readonly closeGraceMs?: number;
}

export interface Serving {
  /**
   * Refuses new guests, lets each guest finish what it is in (bounded), then rolls back and closes
   * them; resolves once PGlite is the owner's alone. The server keeps listening: the socket is the
   * proof of ownership, and it must outlive PGlite's open files (claim.release() ends it after).
   */
  close(): Promise<void>;
}

const LISTEN = /^\s*(un)?listen\b/i;

/**
 * Serves `opened` (PGlite, once it is ready) on `server` from now on: a guest that connects while
 * PGlite still loads is held until it is ready (its own connect timeout bounds the wait), never
 * left without an answer. Call it as soon as the directory is claimed.
 */
export function servePGlite(opened: Promise<ServablePGlite>, server: NodeNet.Server, options: ServeOptions = {}): Serving {
  const guests = new Set<Guest>();
  let closing = false;
  opened.catch(() => {}); // a PGlite that failed to open: its guests are cut off, the opener reports it
  let parameters: Promise<Record<string, string>> | undefined;
  const sessionParameters = () =>
    (parameters ??= opened.then(async (db) => {
      const { rows } = await db.query(
        "SELECT current_setting('server_version') AS server_version, current_setting('TimeZone') AS timezone, current_setting('DateStyle') AS datestyle",
      );
      const row = rows[0] ?? {};
      return {
        server_version: String(row['server_version']),
        server_encoding: 'UTF8',
        client_encoding: 'UTF8',
        DateStyle: String(row['datestyle']),
        TimeZone: String(row['timezone']),
        integer_datetimes: 'on',
        standard_conforming_strings: 'on',
      };
    }));
  server.on('connection', (socket) => {
    // Closing: PGlite is about to close and the directory to change hands. A retryable answer
    // (SQLSTATE 57P03), told apart from a stuck owner's silence: the guest connects to the next owner.
    if (closing) {
      socket.on('error', () => {});
      socket.resume(); // read to its end: a socket never read would keep the server from closing
      socket.setTimeout(2_000, () => socket.destroy()); // nor would a peer that never closes its side
      return void socket.end(
        errorResponse('57P03', 'the owner of this PGlite directory is closing it: connect again to reach the next owner'),
      );
    }
    const guest = new Guest(opened, socket, sessionParameters, options.idleInTransactionMs ?? 30_000);
    guests.add(guest);
    socket.once('close', () => guests.delete(guest));
  });
  return {
    async close() {
      closing = true;
      await Promise.all([...guests].map((guest) => guest.finish(options.closeGraceMs ?? 5_000)));
    },
  };
}

/** One connected process or thread. Its messages run one at a time, in order. */
class Guest {
  #buffer: Uint8Array = new Uint8Array(0);
  #started = false;
  #queue: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;
  #status: TransactionStatus = 'I';
  #skipUntilSync = false;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #ended: Promise<void> | undefined;
  /** Messages received and not yet answered. */
  #waiting = 0;
  #onIdle: (() => void) | undefined;

  constructor(
    private readonly opened: Promise<ServablePGlite>,
    private readonly socket: NodeNet.Socket,
    private readonly parameters: () => Promise<Record<string, string>>,
    private readonly idleInTransactionMs: number,
  ) {
    socket.on('data', (chunk: Uint8Array) => this.#receive(chunk));
    socket.on('error', () => {}); // a guest gone mid-answer: 'close' follows
    socket.once('close', () => void this.end());
  }

  #receive(chunk: Uint8Array): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : concat([this.#buffer, chunk]);
    for (;;) {
      const length = this.#started ? messageLength(this.#buffer) : startupLength(this.#buffer);
      if (length === 0) return;
      if (length < 0) return void this.socket.destroy(); // not the protocol: nothing to answer
      const msg = this.#buffer.slice(0, length);
      this.#buffer = this.#buffer.subarray(length);
      const step = this.#started ? () => this.#handle(msg) : () => this.#preamble(msg);
      if (!this.#started) this.#started = readStartup(msg).kind === 'startup';
      this.#waiting += 1;
      this.#queue = this.#queue
        .then(step)
        .catch(() => void this.socket.destroy())
        .finally(() => {
          this.#waiting -= 1;
          if (this.#isIdle()) this.#onIdle?.();
        });
    }
  }

  async #handle(msg: Uint8Array): Promise<void> {
    if (this.socket.destroyed) return;
    clearTimeout(this.#idle);
    const type = String.fromCharCode(msg[0]!);
    if (type === 'X') return void this.socket.end();
    if (this.#skipUntilSync) {
      if (type === 'S') {
        this.#skipUntilSync = false;
        this.socket.write(readyForQuery(this.#status));
      }
      return;
    }
    if (LISTEN.test(statementText(msg) ?? '')) {
      this.socket.write(errorResponse('0A000', 'LISTEN is not served to guests of a PGlite directory: poll instead'));
      if (type === 'Q') this.socket.write(readyForQuery(this.#status));
      else this.#skipUntilSync = true;
      return;
    }
    const db = await this.opened;
    await this.#hold(db);
    const answer = readAnswer(await db.execProtocolRaw(msg));
    if (!this.socket.destroyed) this.socket.write(answer.bytes);
    if (answer.status !== undefined) this.#status = answer.status;
    if (answer.status === 'I') this.#letGo();
    else {
      this.#idle = setTimeout(() => this.socket.destroy(), this.idleInTransactionMs);
      this.#idle.unref?.();
    }
  }

  /** SSLRequest / GSSENCRequest: no; CancelRequest: not served; StartupMessage: the session is ready. */
  async #preamble(packet: Uint8Array): Promise<void> {
    if (this.socket.destroyed) return;
    const startup = readStartup(packet);
    if (startup.kind === 'ssl' || startup.kind === 'gss') return void this.socket.write(new Uint8Array([78])); // 'N'
    if (startup.kind !== 'startup') return void this.socket.destroy();
    this.socket.write(sessionReady(await this.parameters(), 1 + Math.floor(Math.random() * 2 ** 30), Math.floor(Math.random() * 2 ** 30)));
  }

  /** PGlite for this guest alone: the owner's transaction queue and its statement queue both held. */
  async #hold(db: ServablePGlite): Promise<void> {
    if (this.#release !== undefined) return;
    await new Promise<void>((held) => {
      const hold = () => new Promise<void>((release) => ((this.#release = release), held()));
      const transactionQueue = db._runExclusiveTransaction?.bind(db);
      const statementQueue = db._runExclusiveQuery?.bind(db);
      void (transactionQueue !== undefined && statementQueue !== undefined
        ? transactionQueue(() => statementQueue(hold))
        : db.runExclusive(hold));
    });
  }

  #letGo(): void {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }

  /** Nothing to answer and PGlite not held: ending the guest now cuts nothing off. */
  #isIdle(): boolean {
    return this.#waiting === 0 && this.#release === undefined;
  }

  /** The owner is closing: the guest finishes the statement or transaction it is in (at most `graceMs`), then ends. */
  async finish(graceMs: number): Promise<void> {
    if (!this.#isIdle()) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#onIdle = resolve;
        timer = setTimeout(resolve, graceMs);
      });
      clearTimeout(timer);
    }
    await this.end();
  }

  /** After the last message: what the guest left open is rolled back, then PGlite is let go. */
  end(): Promise<void> {
    return (this.#ended ??= (async () => {
      clearTimeout(this.#idle);
      this.socket.destroy();
      await this.#queue;
      if (this.#release === undefined) return;
      const db = await this.opened;
      try {
        const synced = readAnswer(await db.execProtocolRaw(message('S')));
        if ((synced.status ?? this.#status) !== 'I') await db.execProtocolRaw(query('ROLLBACK'));
      } finally {
        this.#letGo();
      }
    })());
  }
}
