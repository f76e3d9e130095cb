// The CommonJS side of the consumer check: require() resolution and the .d.cts types.
import rack = require('rack-webhooks');

const header: string = rack.signSync('{}', { secrets: 'a', timestamp: 1 });
const result: rack.VerifiedSignature = rack.verifySync('{}', header, { secrets: 'a', now: 1 });
const error: rack.WebhookVerificationError | undefined = undefined;
console.log(result.secretIndex, error);
// @ts-expect-error secrets is required
rack.verifySync('{}', header, {});
export {};
import redisEntry = require('rack-webhooks/redis');
const store = new redisEntry.RedisDedupStore({ call: async () => 'OK' });
console.log(store.timeoutMs);
