export type { DedupClaim, DedupStore } from './store.js';
export { MemoryDedupStore } from './memory-store.js';
export type { MemoryDedupStoreOptions } from './memory-store.js';
export { WebhookDedupError } from './errors.js';
