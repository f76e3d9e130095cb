/**
 * rack-webhooks/redis: the dedup store shared by every receiver process.
 *
 * @module rack-webhooks/redis
 */
export { RedisDedupStore } from './dedup/redis-store.js';
export type { RedisClientLike, RedisDedupStoreOptions } from './dedup/redis-store.js';
export { WebhookDedupError } from './dedup/errors.js';
export type { DedupClaim, DedupStore } from './dedup/store.js';
