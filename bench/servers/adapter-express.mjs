// bench:http, the candidate for Express: the SDK's middleware on a receiver with the default memory
// dedup store and one no-op handler for every event. Nothing prints per request, so what the ratio
// to the HMAC-only control charges is the adapter and the receiver, not a logger.
import express from 'express';
import { createReceiver } from 'rack-webhooks';
import { webhookMiddleware } from 'rack-webhooks/express';

const receiver = createReceiver({ secrets: process.env.RACK_WEBHOOK_SECRETS ?? '' }).onAny(() => {});
const app = express();
app.all('/webhooks', webhookMiddleware(receiver));
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/webhooks`);
});
for (const signal of ['SIGTERM', 'SIGINT'])
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
