/**
 * A guest of a PGlite directory for as long as it runs, not only while its first owner does. Its
 * `pg` Pool connects to whichever process owns the directory at that moment: each new connection
 * first asks the owner's socket whether it serves. When the owner went away (closed, killed, a
 * command that ended), the directory is claimed again (claim.ts): this process becomes the guest of
 * the next owner, or the owner itself, opening PGlite here and serving it on a socket of its own,
 * which its own pool then connects to. Connections asked for meanwhile wait (bounded by the pool's
 * `connectionTimeoutMillis`); a statement already sent to an owner that was killed fails with it.
 */
import { claimDirectory, socketPath, type Claim, type NodeParts } from './claim.js';

/** The parts of `pg` a guest uses, typed structurally (an optional peer). */
export interface PgModule {
  readonly Pool: new (config: object) => PgPool;
  readonly Client: PgClientClass;
}
interface PgPool {
  query(text: string): Promise<unknown>;
  on(event: 'error', listener: () => void): unknown;
  end(): Promise<void>;
}
type PgClientClass = new (config: object) => { port: number; connect(): Promise<unknown> };

/** Opens PGlite on a directory this process has just claimed; resolves once it serves it. */
export type BecomeOwner = (claim: Claim & { role: 'owner' }) => Promise<{ close(): Promise<void> }>;

/** How long an owner may stay closing (its guests finishing, PGlite closing) before a guest gives up waiting. */
const CLOSING_OWNER_MS = 60_000;
const SSL_REQUEST = new Uint8Array([0, 0, 0, 8, 4, 210, 22, 47]);

type Answer = 'serving' | 'closing' | 'silent';

/**
 * What the socket answers an SSLRequest: 'N' (no SSL) from an owner that serves or still loads
 * PGlite; an ErrorResponse from one that is closing; nothing from a socket gone or stuck.
 */
export function askOwner(parts: NodeParts, path: string, timeoutMs = 5_000): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = parts.net.connect(path);
    const done = (answer: Answer) => {
      socket.destroy();
      resolve(answer);
    };
    socket.once('connect', () => socket.write(SSL_REQUEST));
    socket.once('data', (chunk: Uint8Array) => done(chunk[0] === 78 ? 'serving' : chunk[0] === 69 ? 'closing' : 'silent'));
    socket.once('error', () => done('silent'));
    socket.once('close', () => done('silent'));
    socket.setTimeout(timeoutMs, () => done('silent'));
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class DirectoryGuest {
  #generation: number;
  #settling: Promise<void> | undefined;
  #owned: { close(): Promise<void> } | undefined;
  #closed = false;

  constructor(
    private readonly parts: NodeParts,
    private readonly dir: string,
    generation: number,
    private readonly becomeOwner: BecomeOwner,
  ) {
    this.#generation = generation;
  }

  get role(): 'owner' | 'guest' {
    return this.#owned === undefined ? 'guest' : 'owner';
  }

  /** The generation (the socket's "port") a new connection goes to: a live owner's, once any takeover has settled. */
  async target(): Promise<number> {
    for (;;) {
      if (this.#settling !== undefined) await this.#settling;
      if (this.#closed) throw new Error(`the guest of the PGlite directory ${this.dir} is closed`);
      const generation = this.#generation;
      if (this.#owned !== undefined) return generation;
      if ((await askOwner(this.parts, socketPath(this.dir, generation))) === 'serving') return generation;
      if (generation === this.#generation)
        this.#settling ??= this.#settle().finally(() => {
          this.#settling = undefined;
        });
    }
  }

  /** The owner went away or is closing: claims the directory until it has a serving owner (maybe this process). */
  async #settle(): Promise<void> {
    const deadline = Date.now() + CLOSING_OWNER_MS;
    let silent = 0;
    for (let round = 0; ; round++) {
      if (this.#closed) return;
      const claim = await claimDirectory(this.parts, this.dir);
      if (claim.role === 'owner') {
        this.#owned = await this.becomeOwner(claim);
        this.#generation = claim.generation;
        return;
      }
      const answer = await askOwner(this.parts, claim.path);
      if (answer === 'serving') {
        this.#generation = claim.generation;
        return;
      }
      // Closing: its socket goes once its PGlite has closed. Silent twice: it accepts and never answers.
      silent = answer === 'silent' ? silent + 1 : 0;
      if (silent >= 2 || Date.now() > deadline) {
        throw new Error(
          answer === 'silent' ? 'it accepts connections and never answers' : `it has been closing for ${CLOSING_OWNER_MS / 1000} s`,
        );
      }
      await pause(Math.min(250, 5 * 2 ** round));
    }
  }

  /** After the pool has ended: a takeover under way settles, and the PGlite this process took over closes. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#settling?.catch(() => {});
    await this.#owned?.close();
  }
}

/** pg's Client, connecting to the directory's owner of the moment (pg reads `port` when it connects). */
export function guestClient(Client: PgClientClass, guest: DirectoryGuest): PgClientClass {
  return class GuestClient extends Client {
    override connect(callback?: (error?: unknown) => void): Promise<unknown> {
      const connecting = guest.target().then((generation) => {
        this.port = generation;
        return super.connect();
      });
      if (callback === undefined) return connecting;
      connecting.then(() => callback(), callback);
      return undefined as unknown as Promise<unknown>;
    }
  };
}
