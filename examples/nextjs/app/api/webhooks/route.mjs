// Next.js App Router route handler for the rack's webhooks: app/api/webhooks/route.mjs
// (rename to route.js or route.ts as your project prefers; the code is the same).
//
// Run:  copy this file to app/api/webhooks/route.mjs in your Next.js app, then
//       RACK_WEBHOOK_SECRETS=<key> next dev      (or next start after next build)
// Env:  RACK_WEBHOOK_SECRETS  required; the rack's webhook_signing_key ("new,old" during a rotation).
//       It is read when the module loads, and `next build` loads route modules too, so it must be
//       set for the build as well (or move createReceiver into a function called from POST).
// Point the rack at https://<your app>/api/webhooks. Next.js answers other methods with 405.
import { createReceiver, ROUTINE_ACTIONS } from 'rack-webhooks';
import { createFetchHandler } from 'rack-webhooks/web';

// The receiver's memory dedup store lives in this process: run on Node, not the Edge runtime.
// Several instances (serverless, many replicas) need a shared store: rack-webhooks/redis.
export const runtime = 'nodejs';

const secrets = process.env.RACK_WEBHOOK_SECRETS;
if (!secrets?.trim()) {
  throw new Error('RACK_WEBHOOK_SECRETS is not set: export the rack\'s webhook_signing_key ("new,old" during a key rotation).');
}

// Module scope: one receiver (and one dedup store) per server process, not one per request.
const receiver = createReceiver({
  secrets,
  ignore: ROUTINE_ACTIONS, // :noop and :simulated: answered 200 "ignored", no handler runs
  // Records never hold a body, a signature or a secret. Successes print their own summary below.
  logger: (record) => {
    if (record.event === 'processed' || record.event === 'ignored') return;
    const action = record.action ? ` ${record.action}` : '';
    console.error(`[rack-webhooks] ${record.level} ${record.event}${action}${record.code ? ` (${record.code})` : ''}: ${record.message}`);
  },
});

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

// Next.js passes the untouched Request: the handler reads the raw bytes the signature covers.
// Do not call request.json() or request.text() before it.
export const POST = createFetchHandler(receiver);
