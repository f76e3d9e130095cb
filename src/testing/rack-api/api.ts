import { RackModel, type SentEvent } from './model.js';
import { ConnectionDropped, handleRackApi } from './routes.js';
import { TokenBook, type RackRole } from './tokens.js';

export { ConnectionDropped };

/** Options of the emulator's API (`RackEmulatorOptions.api`). */
export interface RackApiOptions {
  /**
   * The rack password (64 letters and digits on a deployed rack), for Basic authentication with any
   * user other than `jwt`. `''`: every caller is admin, as a rack without a password.
   *
   * @defaultValue none: only minted tokens are accepted
   */
  password?: string;
  /**
   * The rack's clock: the default time of every change, and what token expiry is checked against.
   *
   * @defaultValue `() => new Date()`
   */
  now?: () => Date;
}

/**
 * The rack's state and its read API (rack-api.md), on the emulator that sends its webhooks: each
 * change (`createApp`, `build`, `promote`, `budgetAlert`, `autoShutdown`...) writes what the API
 * shows and sends the webhooks the rack sends for it through `dispatch`, except the ones dropped
 * with `drop`; `handle(request)` answers the API's routes from the same state.
 */
export class RackApiEmulator extends RackModel {
  readonly #tokens = new TokenBook();
  readonly #password: string | undefined;
  readonly #clock: () => Date;

  constructor(send: (event: object) => Promise<unknown>, options: RackApiOptions = {}) {
    const now = options.now ?? (() => new Date());
    super(send, now);
    this.#password = options.password;
    this.#clock = now;
  }

  /**
   * A token as `<cli> rack access --role read` mints it, valid 30 days unless `expiresAt` says
   * otherwise. `role` may be any text, to test a credential without the read letter.
   */
  mintToken(options: { role?: RackRole | (string & {}); expiresAt?: Date } = {}): string {
    return this.#tokens.mint((options.role ?? 'r') as RackRole, options.expiresAt ?? new Date(this.#clock().getTime() + 30 * 86_400_000));
  }

  /** `PUT /system/jwt/rotate`: every token minted so far is refused from now on. */
  rotateTokens(): void {
    this.#tokens.rotate();
  }

  /** From now on the app's shutdown-state route answers `500 … malformed`, as for a corrupt stored value. */
  corruptShutdownState(app: string): void {
    this.app(app).shutdownCorrupt = true;
  }

  /** The events sent but dropped on the way: what a reconcile must name. */
  get dropped(): SentEvent[] {
    return this.sent.filter((event) => event.dropped);
  }

  /**
   * Answers one request to the API. Rejects with `ConnectionDropped` where the rack closes the
   * connection without answering (a negative `limit`).
   */
  handle(request: Request): Promise<Response> {
    return handleRackApi(request, { model: this, tokens: this.#tokens, password: this.#password, now: this.#clock });
  }
}
