/**
 * The owner serves its PGlite to other processes and threads on the directory's socket, over the
 * PostgreSQL wire protocol, so `pg` connects to it as to any server (host: the directory). PGlite is
 * one session: each guest gets it exclusively from its first message until PGlite is idle again
 * (ReadyForQuery 'I'), so a guest's transaction never interleaves with the owner's or another
 * guest's. The owner's own queries queue behind it as they queue behind each other.
 *
 * What the shared session cannot give each guest on its own is refused: LISTEN and UNLISTEN (they
 * would change what the owner listens to), so guests poll, and pg_sleep (guest-session.ts). A NOTIFY
 * a guest's statement raises reaches the owner's listeners (PGlite hands them over itself) and is
 * taken out of the guest's answer, which never asked for it. The session state a guest changes
 * (settings, role, temporary tables) is put back when it lets PGlite go (guest-session.ts). A guest
 * that goes away mid-transaction is rolled back; one that holds the session idle in a transaction
 * for `idleInTransactionMs`, or at all for `holdMs`, is cut off and rolled back: the owner's
 * deliveries wait for a guest's transaction, and past 20 s (storeRetry.maxWaitMs) they are lost.
 */
import type * as NodeNet from 'node:net';
import { GuestSession, refusalOf, type Refusal } from './guest-session.js';
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
  /** Resolves once PGlite is ready: guests that connect earlier wait for it. */
  readonly ready: Promise<unknown>;
  /** The longest a guest may leave its transaction idle, in ms. @defaultValue `5000` */
  readonly idleInTransactionMs?: number;
  /** The longest a guest may hold PGlite from its first statement to the end of its transaction, in ms. @defaultValue `10000` */
  readonly holdMs?: number;
}

/** Bounds well under storeRetry.maxWaitMs (20 s), which the owner's deliveries wait at most. */
const GUEST_LIMITS = { idleInTransactionMs: 5_000, holdMs: 10_000 };

/**
 * PGlite's queues, which a guest must hold so that no owner transaction or statement interleaves
 * with its own. They are PGlite's private methods: without them guests are refused, not served unsafely.
 */
function exclusiveQueues(db: ServablePGlite): ((hold: () => Promise<void>) => Promise<void>) | undefined {
  const transactionQueue = db._runExclusiveTransaction?.bind(db);
  const statementQueue = db._runExclusiveQuery?.bind(db);
  if (typeof transactionQueue !== 'function' || typeof statementQueue !== 'function') return undefined;
  return (hold) => transactionQueue(() => statementQueue(hold));
}

const UNSERVABLE: Refusal = {
  sqlState: '0A000',
  message:
    'this PGlite does not have the private _runExclusiveTransaction and _runExclusiveQuery methods the owner needs to serve guests ' +
    "without mixing their statements into its own transactions: guests are refused; use the @electric-sql/pglite version this package's peerDependencies name",
};

export interface Serving {
  /** Stops accepting, rolls back and closes every guest; resolves once PGlite is the owner's alone. */
  close(): Promise<void>;
}

export function servePGlite(db: ServablePGlite, server: NodeNet.Server, options: ServeOptions): Serving {
  const guests = new Set<Guest>();
  let parameters: Promise<Record<string, string>> | undefined;
  const sessionParameters = () =>
    (parameters ??= options.ready.then(async () => {
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
  const limits = { ...GUEST_LIMITS, ...definedOnly(options) };
  const exclusive = exclusiveQueues(db);
  server.on('connection', (socket) => {
    const guest = new Guest(db, socket, sessionParameters, limits, exclusive);
    guests.add(guest);
    socket.once('close', () => guests.delete(guest));
  });
  return {
    async close() {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...guests].map((guest) => guest.end()));
      await stopped;
    },
  };
}

function definedOnly(options: ServeOptions): Partial<typeof GUEST_LIMITS> {
  const { idleInTransactionMs, holdMs } = options;
  return { ...(idleInTransactionMs !== undefined && { idleInTransactionMs }), ...(holdMs !== undefined && { holdMs }) };
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
  #holding: ReturnType<typeof setTimeout> | undefined;
  #ended: Promise<void> | undefined;
  readonly #session: GuestSession;

  constructor(
    private readonly db: ServablePGlite,
    private readonly socket: NodeNet.Socket,
    private readonly parameters: () => Promise<Record<string, string>>,
    private readonly limits: typeof GUEST_LIMITS,
    private readonly exclusive: ((hold: () => Promise<void>) => Promise<void>) | undefined,
  ) {
    this.#session = new GuestSession(db);
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
      this.#queue = this.#queue.then(step).catch(() => void this.socket.destroy());
    }
  }

  async #handle(msg: Uint8Array): Promise<void> {
    if (this.socket.destroyed || this.socket.writableEnded) return;
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
    const refusal = refusalOf(statementText(msg));
    if (refusal !== undefined) {
      this.socket.write(errorResponse(refusal.sqlState, refusal.message));
      if (type === 'Q') this.socket.write(readyForQuery(this.#status));
      else this.#skipUntilSync = true;
      return;
    }
    await this.#hold();
    const answer = readAnswer(await this.db.execProtocolRaw(msg));
    if (!this.socket.destroyed) this.socket.write(answer.bytes);
    if (answer.status !== undefined) this.#status = answer.status;
    if (answer.status === 'I') await this.#letGo();
    else {
      this.#idle = setTimeout(
        () =>
          this.#cutOff(
            '25P03',
            `a guest of a PGlite directory may stay idle in a transaction at most ${this.limits.idleInTransactionMs} ms`,
          ),
        this.limits.idleInTransactionMs,
      );
      this.#idle.unref?.();
    }
  }

  /** Ends the guest with an error it can read; end() rolls back what it left open. */
  #cutOff(sqlState: string, text: string): void {
    if (this.socket.destroyed || this.socket.writableEnded) return;
    this.socket.end(errorResponse(sqlState, `${text}: its transaction was rolled back`), () => this.socket.destroy());
    void this.end();
  }

  /** SSLRequest / GSSENCRequest: no; CancelRequest: not served; StartupMessage: the session is ready. */
  async #preamble(packet: Uint8Array): Promise<void> {
    if (this.socket.destroyed) return;
    const startup = readStartup(packet);
    if (startup.kind === 'ssl' || startup.kind === 'gss') return void this.socket.write(new Uint8Array([78])); // 'N'
    if (startup.kind !== 'startup') return void this.socket.destroy();
    if (this.exclusive === undefined) return void this.socket.end(errorResponse(UNSERVABLE.sqlState, UNSERVABLE.message));
    this.socket.write(sessionReady(await this.parameters(), 1 + Math.floor(Math.random() * 2 ** 30), Math.floor(Math.random() * 2 ** 30)));
  }

  /** PGlite for this guest alone: the owner's transaction queue and its statement queue both held. */
  async #hold(): Promise<void> {
    if (this.#release !== undefined) return;
    await new Promise<void>((held) => {
      const hold = () => new Promise<void>((release) => ((this.#release = release), held()));
      void this.exclusive!(hold);
    });
    this.#holding = setTimeout(
      () => this.#cutOff('25P04', `a guest of a PGlite directory may hold it at most ${this.limits.holdMs} ms at a time`),
      this.limits.holdMs,
    );
    this.#holding.unref?.();
    try {
      await this.#session.note();
    } catch (error) {
      this.#free();
      throw error;
    }
  }

  /** The session as the guest found it, then PGlite back to the owner. */
  async #letGo(): Promise<void> {
    if (this.#release === undefined) return;
    try {
      await this.#session.restore();
    } finally {
      this.#free();
    }
  }

  #free(): void {
    clearTimeout(this.#holding);
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }

  /** After the last message: what the guest left open is rolled back, then PGlite is let go. */
  end(): Promise<void> {
    return (this.#ended ??= (async () => {
      clearTimeout(this.#idle);
      if (!this.socket.writableEnded) this.socket.destroy();
      await this.#queue;
      if (this.#release === undefined) return;
      try {
        const synced = readAnswer(await this.db.execProtocolRaw(message('S')));
        if ((synced.status ?? this.#status) !== 'I') await this.db.execProtocolRaw(query('ROLLBACK'));
      } finally {
        await this.#letGo();
      }
    })());
  }
}
