/**
 * A guest of a PGlite directory for as long as it runs, not only while its first owner does. Its
 * `pg` Pool connects to whichever process owns the directory at that moment: each new connection
 * first asks the owner's socket whether it serves. When the owner went away (closed, killed, a
 * command that ended), the directory is claimed again (claim.ts): this process becomes the guest of
 * the next owner, or the owner itself, opening PGlite here and serving it on a socket of its own,
 * which its own pool then connects to. Connections asked for meanwhile wait (bounded by the pool's
 * `connectionTimeoutMillis`); a statement already sent to an owner that was killed fails with it.
 * An owner that is alive and answers nothing (stopped, hung) cannot be taken over: a connection to
 * it fails after two unanswered questions, a statement waiting on it once the watch (owner-watch.ts)
 * finds it silent, both with `pglite_owner_unreachable` naming its pid.
 */
import { askOwner, ownerState, ownerUnreachable } from './ask-owner.js';
import { claimDirectory, socketPath, type Claim, type NodeParts } from './claim.js';
import { OwnerWatch, type WatchedClient } from './owner-watch.js';

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
type PgClientClass = new (config: object) => WatchedClient & {
  port: number;
  connect(): Promise<unknown>;
  once(event: 'end', listener: () => void): unknown;
};

/** Opens PGlite on a directory this process has just claimed; resolves once it serves it. */
export type BecomeOwner = (claim: Claim & { role: 'owner' }) => Promise<{ close(): Promise<void> }>;

/** How long an owner may stay closing (its guests finishing, PGlite closing) before a guest gives up waiting. */
const CLOSING_OWNER_MS = 60_000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class DirectoryGuest {
  #settling: Promise<void> | undefined;
  #owned: { close(): Promise<void> } | undefined;
  #closed = false;
  /** Watches the connections made to the owner (owner-watch.ts). */
  readonly watch: OwnerWatch;

  constructor(
    private readonly parts: NodeParts,
    private readonly dir: string,
    /** The generation (the socket's "port") of the owner this process last found serving, or is. */
    private generation: number,
    private readonly becomeOwner: BecomeOwner,
  ) {
    this.watch = new OwnerWatch(parts, dir);
  }

  get role(): 'owner' | 'guest' {
    return this.#owned === undefined ? 'guest' : 'owner';
  }

  /** The generation (the socket's "port") a new connection goes to: a live owner's, once any takeover has settled. */
  async target(): Promise<number> {
    for (;;) {
      if (this.#settling !== undefined) await this.#settling;
      if (this.#closed) throw new Error(`the guest of the PGlite directory ${this.dir} is closed`);
      const generation = this.generation;
      if (this.#owned !== undefined) return generation;
      const answer = await askOwner(this.parts, socketPath(this.dir, generation));
      if (answer === 'serving') return generation;
      if (generation === this.generation)
        this.#settling ??= this.#settle(answer === 'silent' ? generation : undefined).finally(() => {
          this.#settling = undefined;
        });
    }
  }

  /**
   * The owner went away or is closing: claims the directory until it has a serving owner (maybe this
   * process). `silentGeneration`: the owner that was just found silent, which counts as asked once.
   */
  async #settle(silentGeneration: number | undefined): Promise<void> {
    const startedAt = Date.now();
    const deadline = startedAt + CLOSING_OWNER_MS;
    let silent = 0;
    for (let round = 0; ; round++) {
      if (this.#closed) return;
      const claim = await claimDirectory(this.parts, this.dir);
      if (claim.role === 'owner') {
        this.#owned = await this.becomeOwner(claim);
        this.generation = claim.generation;
        return;
      }
      const answer = await askOwner(this.parts, claim.path);
      if (answer === 'serving') {
        this.generation = claim.generation;
        return;
      }
      // Closing: its socket goes once its PGlite has closed. Loading or closing PGlite: that can hold
      // the process for many seconds (a CLI run beside an app: 21 s on a loaded machine). Otherwise silent twice (the question that
      // started this counts): it accepts and never answers.
      const { pid, loading } = answer === 'silent' ? await ownerState(this.parts, claim.path) : { loading: true };
      silent = loading ? 0 : silent + (round === 0 && claim.generation === silentGeneration ? 2 : 1);
      if (silent >= 2) throw ownerUnreachable(this.dir, claim.path, pid, Date.now() - startedAt);
      if (Date.now() > deadline) throw new Error(`it has been closing for ${CLOSING_OWNER_MS / 1000} s`);
      await pause(Math.min(250, 5 * 2 ** round));
    }
  }

  /** After the pool has ended: a takeover under way settles, and the PGlite this process took over closes. */
  async close(): Promise<void> {
    this.#closed = true;
    this.watch.close();
    await this.#settling?.catch(() => {});
    await this.#owned?.close();
  }
}

/** pg's Client, connecting to the directory's owner of the moment (pg reads `port` when it connects). */
export function guestClient(Client: PgClientClass, guest: DirectoryGuest): PgClientClass {
  return class GuestClient extends Client {
    override connect(callback?: (error?: unknown) => void): Promise<unknown> {
      const connecting = guest.target().then(async (generation) => {
        this.port = generation;
        const connected = await super.connect();
        this.once('end', guest.watch.add(this, generation));
        return connected;
      });
      if (callback === undefined) return connecting;
      connecting.then(() => callback(), callback);
      return undefined as unknown as Promise<unknown>;
    }
  };
}
