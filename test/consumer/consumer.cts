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
import web = require('rack-webhooks/web');
import nodeAdapter = require('rack-webhooks/node');
import expressAdapter = require('rack-webhooks/express');
const receiver = rack.createReceiver({ secrets: 'k' });
console.log(web.createFetchHandler(receiver), nodeAdapter.createNodeHandler(receiver), expressAdapter.webhookMiddleware(receiver));
import validateEntry = require('rack-webhooks/validate');
console.log(rack.parseEvent('{}', { validate: validateEntry.validators }).action);
import inboxEntry = require('rack-webhooks/inbox');
console.log(typeof inboxEntry.createInbox, inboxEntry.DEFAULT_TABLE);
