/**
 * One guest connected to the owner's socket (serve.ts): its messages run one at a time, in order,
 * on PGlite held for it alone. Refused statements and the session state it may not leave behind
 * are guest-session.ts's; its limits (idle in a transaction, holding PGlite) are enforced here.
 */
import type * as NodeNet from 'node:net';
import { settleWithin } from '../../shared/timers.js';
import { GuestSession, refusalOf, type ProtocolSession } from './guest-session.js';
import {
  errorResponse,
  message,
  messageLength,
  query,
  readAnswer,
  readyForQuery,
  sessionReady,
  startupKind,
  startupLength,
  statementText,
  type TransactionStatus,
} from './wire.js';

/** The parts of PGlite the owner's socket uses, typed structurally (an optional peer). */
export interface ServablePGlite extends ProtocolSession {
  execProtocolRaw(message: Uint8Array, options?: { syncToFs?: boolean }): Promise<Uint8Array>;
  query(text: string): Promise<{ rows: Record<string, unknown>[] }>;
  /** PGlite's own transaction queue: held too, so no owner transaction is open while a guest runs. */
  _runExclusiveTransaction?<T>(fn: () => Promise<T>): Promise<T>;
  _runExclusiveQuery?<T>(fn: () => Promise<T>): Promise<T>;
}

/**
 * Holds PGlite's queues for `hold`'s duration, which a guest must hold so that no owner transaction
 * or statement interleaves with its own. They are PGlite's private methods: without them (undefined)
 * guests are refused, not served unsafely.
 */
function exclusiveQueues(db: ServablePGlite): ((hold: () => Promise<void>) => Promise<void>) | undefined {
  const transactionQueue = db._runExclusiveTransaction?.bind(db);
  const statementQueue = db._runExclusiveQuery?.bind(db);
  if (typeof transactionQueue !== 'function' || typeof statementQueue !== 'function') return undefined;
  return (hold) => transactionQueue(() => statementQueue(hold));
}

export interface GuestLimits {
  readonly idleInTransactionMs: number;
  readonly holdMs: number;
}

const UNSERVABLE =
  'this PGlite does not have the private _runExclusiveTransaction and _runExclusiveQuery methods the owner needs to serve guests ' +
  "without mixing their statements into its own transactions: guests are refused; use the @electric-sql/pglite version this package's peerDependencies name";

/** One connected process or thread. Its messages run one at a time, in order. */
export class Guest {
  #buffer: Uint8Array = new Uint8Array(0);
  #started = false;
  #queue: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;
  #status: TransactionStatus = 'I';
  #skipUntilSync = false;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #holding: ReturnType<typeof setTimeout> | undefined;
  #ended: Promise<void> | undefined;
  /** Made once PGlite is ready (the guest may connect while it still loads). */
  #session: GuestSession | undefined;
  /** Messages received and not yet answered. */
  #waiting = 0;
  #onIdle: (() => void) | undefined;

  constructor(
    /** PGlite once it is ready. */
    private readonly opened: Promise<ServablePGlite>,
    private readonly socket: NodeNet.Socket,
    private readonly parameters: () => Promise<Record<string, string>>,
    private readonly limits: GuestLimits,
  ) {
    socket.on('data', (chunk: Uint8Array) => this.#receive(chunk));
    socket.on('error', () => {}); // a guest gone mid-answer: 'close' follows
    socket.once('close', () => void this.end());
  }

  #receive(chunk: Uint8Array): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const length = this.#started ? messageLength(this.#buffer) : startupLength(this.#buffer);
      if (length === 0) return;
      if (length < 0) return void this.socket.destroy(); // not the protocol: nothing to answer
      const msg = this.#buffer.slice(0, length);
      this.#buffer = this.#buffer.subarray(length);
      const step = this.#started ? () => this.#handle(msg) : () => this.#preamble(msg);
      if (!this.#started) this.#started = startupKind(msg) === 'startup';
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

  #gone(): boolean {
    return this.socket.destroyed || this.socket.writableEnded;
  }

  async #handle(msg: Uint8Array): Promise<void> {
    if (this.#gone()) return;
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
      this.socket.write(errorResponse('0A000', refusal));
      if (type === 'Q') this.socket.write(readyForQuery(this.#status));
      else this.#skipUntilSync = true;
      return;
    }
    const db = await this.opened;
    await this.#hold(db);
    const answer = readAnswer(await db.execProtocolRaw(msg));
    if (!this.socket.destroyed) this.socket.write(answer.bytes);
    if (answer.status !== undefined) this.#status = answer.status;
    if (answer.status === 'I') await this.#letGo();
    else this.#idle = this.#limit('25P03', this.limits.idleInTransactionMs, 'stay idle in a transaction at most %d ms');
  }

  /** Cuts the guest off once `ms` have passed, unless the timer is cleared first; `may` says what it overstayed (%d: the ms). */
  #limit(sqlState: string, ms: number, may: string): ReturnType<typeof setTimeout> {
    const timer = setTimeout(() => this.#cutOff(sqlState, `a guest of a PGlite directory may ${may.replace('%d', String(ms))}`), ms);
    timer.unref?.();
    return timer;
  }

  /** Ends the guest with an error it can read; end() rolls back what it left open. */
  #cutOff(sqlState: string, text: string): void {
    if (this.#gone()) return;
    this.socket.end(errorResponse(sqlState, `${text}: its transaction was rolled back`), () => this.socket.destroy());
    void this.end();
  }

  /** SSLRequest / GSSENCRequest: no; CancelRequest: not served; StartupMessage: the session is ready. */
  async #preamble(packet: Uint8Array): Promise<void> {
    if (this.socket.destroyed) return;
    const kind = startupKind(packet);
    if (kind === 'encryption') return void this.socket.write(new Uint8Array([78])); // 'N'
    if (kind !== 'startup') return void this.socket.destroy();
    const db = await this.opened; // PGlite still loading: the guest waits for it
    if (exclusiveQueues(db) === undefined) return void this.socket.end(errorResponse('0A000', UNSERVABLE));
    this.socket.write(sessionReady(await this.parameters(), 1 + Math.floor(Math.random() * 2 ** 30), Math.floor(Math.random() * 2 ** 30)));
  }

  /** PGlite for this guest alone: the owner's transaction queue and its statement queue both held. */
  async #hold(db: ServablePGlite): Promise<void> {
    if (this.#release !== undefined) return;
    const exclusive = exclusiveQueues(db);
    if (exclusive === undefined) throw new Error(UNSERVABLE); // never started: preamble refused it
    await new Promise<void>((held) => {
      const hold = () => new Promise<void>((release) => ((this.#release = release), held()));
      void exclusive(hold);
    });
    this.#holding = this.#limit('25P04', this.limits.holdMs, 'hold it at most %d ms at a time');
    try {
      await (this.#session ??= new GuestSession(db)).note();
    } catch (error) {
      this.#free();
      throw error;
    }
  }

  /** The session as the guest found it, then PGlite back to the owner. */
  async #letGo(): Promise<void> {
    if (this.#release === undefined) return;
    try {
      await this.#session?.restore();
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

  /** Nothing to answer and PGlite not held: ending the guest now cuts nothing off. */
  #isIdle(): boolean {
    return this.#waiting === 0 && this.#release === undefined;
  }

  /** The owner is closing: the guest finishes the statement or transaction it is in (at most `graceMs`), then ends. */
  async finish(graceMs: number): Promise<void> {
    if (!this.#isIdle()) await settleWithin(new Promise<void>((resolve) => (this.#onIdle = resolve)), graceMs, () => undefined);
    await this.end();
  }

  /** After the last message: what the guest left open is rolled back, then PGlite is let go. */
  end(): Promise<void> {
    return (this.#ended ??= (async () => {
      clearTimeout(this.#idle);
      if (!this.socket.writableEnded) this.socket.destroy(); // a cut-off guest reads its error first
      await this.#queue;
      if (this.#release === undefined) return;
      const db = await this.opened;
      try {
        const synced = readAnswer(await db.execProtocolRaw(message('S')));
        if ((synced.status ?? this.#status) !== 'I') await db.execProtocolRaw(query('ROLLBACK'));
      } finally {
        await this.#letGo();
      }
    })());
  }
}
