// Fastify 5 receiver for the rack's webhooks.
//
// Run:  RACK_WEBHOOK_SECRETS=<key> node examples/fastify.mjs
// Env:  RACK_WEBHOOK_SECRETS  required; the rack's webhook_signing_key ("new,old" during a rotation)
//       PORT                  default 3000 (0 = any free port)
//       HOST                  default 127.0.0.1
//       SHUTDOWN_DRAIN_MS     default 5000: after SIGTERM, how long requests are still answered before the listener closes
// Point the rack at http://<host>:<port>/webhooks.
import Fastify from 'fastify';
import { createReceiver, ROUTINE_ACTIONS } from 'rack-webhooks';
import rackWebhooks from 'rack-webhooks/fastify';
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

// Fastify's own request logging is off to keep the output to the lines above; turn it on with
// `logger: true` (the plugin logs each delivery's status, never its body).
const app = Fastify({ logger: false });

// The plugin is encapsulated: inside its scope it keeps the raw body bytes the signature covers,
// while the rest of the app keeps Fastify's normal JSON parsing.
await app.register(rackWebhooks, { receiver, path: '/webhooks' });
app.get('/healthz', async () => ({ ok: true }));

try {
  await app.listen({ port, host });
} catch (error) {
  console.error(`Could not listen on ${host}:${port}: ${error.message}`);
  process.exit(1);
}
const { port: actual } = app.server.address();
console.log(`listening on http://${host.includes(':') ? `[${host}]` : host}:${actual}/webhooks`);

// SIGTERM or SIGINT: answers still come for SHUTDOWN_DRAIN_MS (each with Connection: close, while a load
// balancer moves away), then the listener closes and the requests in flight finish; the same signal again exits at once.
// Fastify's own close (its onClose hooks) comes last: called first, it would answer 503 at once.
createShutdown(app.server, { drainMs: Number(process.env.SHUTDOWN_DRAIN_MS ?? 5000), close: () => app.close() });
