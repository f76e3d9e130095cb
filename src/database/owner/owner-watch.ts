/**
 * A guest's statements are answered by its owner's process. One that stops answering without going
 * away (SIGSTOP, a debugger, a hang) keeps its socket accepting, so pg would wait for its answer
 * forever: a readiness probe hung, every delivery waited, and `/readyz` said ready from its cache.
 * The watch asks the owner directly once a statement has waited `waitMs` with no byte back; an owner
 * whose process does not answer that either is silent, and the connections waiting on it are ended
 * with `pglite_owner_unreachable` (its pid when known), so their statements fail in a bounded time
 * and the pool's next connection asks again. A busy owner (a guest's transaction ahead, a backlog)
 * answers the question at once, and its statements keep waiting.
 */
import { askOwner, ownerState, ownerUnreachable } from './ask-owner.js';
import { socketPath, type NodeParts } from './claim.js';

/** A connected pg Client, as far as the watch reads it (pg sets `readyForQuery` false while a statement is out). */
export interface WatchedClient {
  readonly readyForQuery?: boolean;
  readonly connection?: { readonly stream?: { readonly bytesRead?: number; destroy(error?: Error): unknown } };
}

interface Watched {
  readonly client: WatchedClient;
  readonly generation: number;
  waitingSince: number | undefined;
  bytesRead: number | undefined;
}

/** How long a statement waits with no byte back before the owner is asked (who then has ASK_TIMEOUT_MS to answer). */
const WAIT_MS = 5_000;
const TICK_MS = 500;

export class OwnerWatch {
  readonly #watched = new Set<Watched>();
  readonly #asking = new Set<number>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly parts: NodeParts,
    private readonly dir: string,
  ) {}

  /** Watches `client`, connected to the owner of `generation`, until `stop` is called. */
  add(client: WatchedClient, generation: number): () => void {
    const watched: Watched = { client, generation, waitingSince: undefined, bytesRead: undefined };
    this.#watched.add(watched);
    this.#timer ??= setInterval(() => this.#tick(), TICK_MS);
    this.#timer.unref?.();
    return () => {
      this.#watched.delete(watched);
      if (this.#watched.size === 0) this.close();
    };
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    const now = Date.now();
    for (const watched of this.#watched) {
      const read = watched.client.connection?.stream?.bytesRead;
      if (watched.client.readyForQuery !== false) watched.waitingSince = undefined;
      else if (watched.waitingSince === undefined || read !== watched.bytesRead) watched.waitingSince = now; // new, or answering
      watched.bytesRead = read;
      if (watched.waitingSince !== undefined && now - watched.waitingSince >= WAIT_MS && !this.#asking.has(watched.generation)) {
        this.#asking.add(watched.generation);
        void this.#ask(watched.generation).finally(() => this.#asking.delete(watched.generation));
      }
    }
  }

  async #ask(generation: number): Promise<void> {
    const path = socketPath(this.dir, generation);
    const askedAt = Date.now();
    const answer = await askOwner(this.parts, path);
    const waiting = [...this.#watched].filter((watched) => watched.generation === generation && watched.waitingSince !== undefined);
    if (answer !== 'silent') {
      // Busy, not stuck (or closing, and ending its guests itself): wait on, and ask again after WAIT_MS.
      for (const watched of waiting) watched.waitingSince = Math.max(watched.waitingSince!, askedAt);
      return;
    }
    const { pid } = await ownerState(this.parts, path);
    const oldest = Math.min(askedAt, ...waiting.map((watched) => watched.waitingSince!));
    for (const watched of this.#watched) {
      if (watched.generation !== generation) continue;
      this.#watched.delete(watched);
      // Every connection to it, idle ones too: the pool's next connection asks the owner again.
      watched.client.connection?.stream?.destroy(ownerUnreachable(this.dir, path, pid, Date.now() - oldest));
    }
  }
}
