// Hono receiver for the rack's webhooks, served on Node by @hono/node-server.
//
// Run:  RACK_WEBHOOK_SECRETS=<key> node examples/hono.mjs
// Env:  RACK_WEBHOOK_SECRETS  required; the rack's webhook_signing_key ("new,old" during a rotation)
//       PORT                  default 3000 (0 = any free port)
//       HOST                  default 127.0.0.1
//       SHUTDOWN_DRAIN_MS     default 5000: after SIGTERM, how long requests are still answered before the listener closes
// Point the rack at http://<host>:<port>/webhooks.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createReceiver, ROUTINE_ACTIONS } from 'rack-webhooks';
import { createFetchHandler } from 'rack-webhooks/web';
import { createShutdown } from 'rack-webhooks/node';

const secrets = process.env.RACK_WEBHOOK_SECRETS;
if (!secrets?.trim()) {
  console.error('RACK_WEBHOOK_SECRETS is not set: export the rack\'s webhook_signing_key ("new,old" during a key rotation).');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a whole number from 0 to 65535, got ${JSON.stringify(process.env.PORT)}.`);
  process.exit(1);
}
const host = process.env.HOST || '127.0.0.1';

let receiver;
try {
  receiver = createReceiver({
    secrets,
    ignore: ROUTINE_ACTIONS, // :noop and :simulated: answered 200 "ignored", no handler runs
    // Records never hold a body, a signature or a secret. Successes print their own summary below.
    logger: (record) => {
      if (record.event === 'processed' || record.event === 'ignored') return;
      const action = record.action ? ` ${record.action}` : '';
      console.error(`[rack-webhooks] ${record.level} ${record.event}${action}${record.code ? ` (${record.code})` : ''}: ${record.message}`);
    },
  });
} catch (error) {
  console.error(`Invalid RACK_WEBHOOK_SECRETS: ${error.message}`);
  process.exit(1);
}

receiver.on('app:budget:auto-shutdown:fired', (event) => {
  const { app, rack, tick_id, spend_usd, cap_usd } = event.data;
  console.log(`auto-shutdown fired: app=${app} rack=${rack} tick=${tick_id} (spend $${spend_usd} of $${cap_usd} cap)`);
});
receiver.on('app:budget:auto-shutdown:failed', (event) => {
  const { app, rack, tick_id, spend_usd, cap_usd } = event.data;
  console.log(
    `auto-shutdown FAILED, services still running: app=${app} rack=${rack} tick=${tick_id} (spend $${spend_usd} of $${cap_usd} cap)`,
  );
});
receiver.on('app:budget:cap', (event) => {
  console.log(`budget cap reached: app=${event.data.app} rack=${event.data.rack}`);
});
receiver.onError((error) => {
  console.error(`[rack-webhooks] ${error.code}: ${error.message}`);
});

const handleWebhook = createFetchHandler(receiver);
const app = new Hono();
// Hand over the untouched Request: the signature covers its raw bytes, so do not call
// c.req.json() (or a validator middleware that does) on this route first.
// app.all: any other method gets the handler's 405 with Allow: POST, not Hono's 404.
app.all('/webhooks', (c) => handleWebhook(c.req.raw));
app.get('/healthz', (c) => c.json({ ok: true }));

const server = serve({ fetch: app.fetch, port, hostname: host }, (info) => {
  console.log(`listening on http://${host.includes(':') ? `[${host}]` : host}:${info.port}/webhooks`);
});
server.on('error', (error) => {
  console.error(`Could not listen on ${host}:${port}: ${error.message}`);
  process.exit(1);
});

// SIGTERM or SIGINT: answers still come for SHUTDOWN_DRAIN_MS (each with Connection: close, while a load
// balancer moves away), then the listener closes and the requests in flight finish; the same signal again exits at once.
createShutdown(server, { drainMs: Number(process.env.SHUTDOWN_DRAIN_MS ?? 5000) });
