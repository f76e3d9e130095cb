import { describeThrown } from '../shared/thrown.js';
import { MAX_TIMER_MS } from '../shared/timers.js';
import { WebhookDedupError } from './errors.js';
import { assertTtlSeconds, type DedupClaim, type DedupStore } from './store.js';

/**
 * The part of a Redis client this store uses. ioredis clients have `call(command, ...args)`;
 * node-redis (v4 and later) clients have `sendCommand([command, ...args])`. Neither package is a
 * dependency: the user passes in the client they already have.
 */
export type RedisClientLike =
  | {
      /** ioredis: sends any command. */
      call(command: string, ...args: (string | number)[]): Promise<unknown>;
    }
  | {
      /** node-redis v4 and later: sends any command. */
      sendCommand(args: string[]): Promise<unknown>;
    };

/** Options of {@link RedisDedupStore}. */
export interface RedisDedupStoreOptions {
  /**
   * Prefix of every key. Share it across receivers of one stream.
   *
   * @defaultValue `'rack-webhooks:'`
   */
  prefix?: string;
  /**
   * Give up on a command after this many milliseconds (from 1 to 2,147,483,647), whatever the
   * client's own retry settings: a delivery is never held hostage by a Redis that does not answer.
   *
   * @defaultValue `2000`
   */
  timeoutMs?: number;
}

/** All keys free: set them all with their TTLs. Any key held: set nothing. One round trip. */
const CLAIM_ALL = `for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], '1', 'PX', ARGV[i])
end
return 1`;

type Send = (args: string[]) => Promise<unknown>;

function commandSender(client: RedisClientLike): Send {
  if (typeof (client as { call?: unknown }).call === 'function') {
    const ioredis = client as { call(command: string, ...args: string[]): Promise<unknown> };
    return ([command, ...args]) => ioredis.call(command!, ...args);
  }
  if (typeof (client as { sendCommand?: unknown }).sendCommand === 'function') {
    const nodeRedis = client as { sendCommand(args: string[]): Promise<unknown> };
    return (args) => nodeRedis.sendCommand(args);
  }
  throw new TypeError('RedisDedupStore needs an ioredis client (call) or a node-redis client (sendCommand).');
}

/** 100 years: Redis refuses a PX whose expiry time overflows, so longer TTLs are held this long. */
const MAX_TTL_MS = 100 * 365 * 86_400_000;

function ttlMillis(ttlSeconds: number): string {
  assertTtlSeconds(ttlSeconds);
  return String(Math.min(MAX_TTL_MS, Math.max(1000, Math.ceil(ttlSeconds * 1000))));
}

/**
 * The same contract as MemoryDedupStore across any number of receiver processes. Each delivery
 * costs one round trip (a Lua script claims both keys atomically); keys expire in Redis itself.
 * A command that fails or times out rejects with {@link WebhookDedupError}.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { createReceiver } from 'rack-webhooks';
 * import { RedisDedupStore } from 'rack-webhooks/redis';
 *
 * const client = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
 * const receiver = createReceiver({ secrets: process.env.RACK_WEBHOOK_SECRETS!, dedup: new RedisDedupStore(client) });
 * ```
 */
export class RedisDedupStore implements DedupStore {
  /** The prefix of every key. */
  readonly prefix: string;
  /** How long a command may take, in milliseconds. */
  readonly timeoutMs: number;
  readonly #send: Send;

  constructor(client: RedisClientLike, options: RedisDedupStoreOptions = {}) {
    this.#send = commandSender(client);
    this.prefix = options.prefix ?? 'rack-webhooks:';
    this.timeoutMs = options.timeoutMs ?? 2000;
    if (typeof this.timeoutMs !== 'number' || !(this.timeoutMs > 0 && this.timeoutMs <= MAX_TIMER_MS)) {
      throw new RangeError(`timeoutMs must be a number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${String(options.timeoutMs)}`);
    }
  }

  async #run(args: string[]): Promise<unknown> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new WebhookDedupError(`Redis did not answer ${args[0]} within ${this.timeoutMs} ms.`)),
        this.timeoutMs,
      );
    });
    try {
      return await Promise.race([this.#send(args), timeout]);
    } catch (error) {
      if (error instanceof WebhookDedupError) throw error;
      throw new WebhookDedupError(`Redis ${args[0]} failed: ${describeThrown(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Holds `key` for `ttlSeconds` (SET NX PX) unless it is held: true when this call now holds it. */
  async claim(key: string, ttlSeconds: number): Promise<boolean> {
    const reply = await this.#run(['SET', this.prefix + key, '1', 'NX', 'PX', ttlMillis(ttlSeconds)]);
    return reply === 'OK';
  }

  /** Holds every key or none, in one round trip: true when this call now holds them all. */
  async claimAll(claims: readonly DedupClaim[]): Promise<boolean> {
    const keys = claims.map(({ key }) => this.prefix + key);
    const ttls = claims.map(({ ttlSeconds }) => ttlMillis(ttlSeconds));
    const reply = await this.#run(['EVAL', CLAIM_ALL, String(keys.length), ...keys, ...ttls]);
    return reply === 1 || reply === '1';
  }

  /** Gives a key back (DEL). */
  async release(key: string): Promise<void> {
    await this.#run(['DEL', this.prefix + key]);
  }
}
