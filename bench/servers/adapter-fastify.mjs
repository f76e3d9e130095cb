// bench:http, the candidate for Fastify: the SDK's plugin on a receiver with the default memory
// dedup store and one no-op handler for every event; no logger, as in the bare Fastify route.
import Fastify from 'fastify';
import { createReceiver } from 'rack-webhooks';
import rackWebhooks from 'rack-webhooks/fastify';

const receiver = createReceiver({ secrets: process.env.RACK_WEBHOOK_SECRETS ?? '' }).onAny(() => {});
const app = Fastify({ logger: false });
await app.register(rackWebhooks, { receiver, path: '/webhooks' });
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(`listening on http://127.0.0.1:${app.server.address().port}/webhooks`);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => app.close().then(() => process.exit(0)));
