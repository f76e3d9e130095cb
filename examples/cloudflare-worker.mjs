// Cloudflare Worker (module syntax) receiving the rack's webhooks.
//
// Run:  npx wrangler secret put RACK_WEBHOOK_SECRETS   (once; paste the key)
//       npx wrangler dev examples/cloudflare-worker.mjs   (or wrangler deploy with main = this file)
//       No nodejs_compat flag needed: only Web APIs are used.
// Env:  RACK_WEBHOOK_SECRETS  required binding (a secret); the rack's webhook_signing_key
//       ("new,old" during a rotation). Without it every delivery gets 500 not_configured.
// Point the rack at https://<worker>/webhooks. Other paths answer 404.
//
// Deduplication: the default memory store lives in one isolate, and Cloudflare runs many isolates
// and recycles them. It catches a copy that reaches the same isolate, nothing more. For real
// deduplication, pass a `dedup` store backed by a Durable Object (or Redis over HTTP).
import { createReceiver, ROUTINE_ACTIONS } from 'rack-webhooks';
import { createFetchHandler } from 'rack-webhooks/web';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

/** Built on the first request of an isolate (bindings only exist inside fetch), then reused. */
let handler;
let handlerSecrets;

function getHandler(secrets) {
  if (handler !== undefined && handlerSecrets === secrets) return handler;
  const receiver = createReceiver({
    secrets,
    ignore: ROUTINE_ACTIONS, // :noop and :simulated: answered 200 "ignored", no handler runs
    // Records never hold a body, a signature or a secret. They show up in `wrangler tail`.
    logger: (record) => {
      if (record.event === 'processed' || record.event === 'ignored') return;
      const action = record.action ? ` ${record.action}` : '';
      console.warn(`[rack-webhooks] ${record.level} ${record.event}${action}${record.code ? ` (${record.code})` : ''}: ${record.message}`);
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
  handler = createFetchHandler(receiver);
  handlerSecrets = secrets; // a rotated secret (new deployment) builds a new receiver
  return handler;
}

export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname !== '/webhooks') {
      return new Response(JSON.stringify({ error: 'not_found' }), { status: 404, headers: JSON_HEADERS });
    }
    const secrets = env.RACK_WEBHOOK_SECRETS;
    if (typeof secrets !== 'string' || secrets.trim() === '') {
      console.error('RACK_WEBHOOK_SECRETS is not set: wrangler secret put RACK_WEBHOOK_SECRETS');
      return new Response(JSON.stringify({ error: 'not_configured' }), { status: 500, headers: JSON_HEADERS });
    }
    let handle;
    try {
      handle = getHandler(secrets);
    } catch (error) {
      console.error(`Invalid RACK_WEBHOOK_SECRETS: ${error.message}`); // the message never holds a key
      return new Response(JSON.stringify({ error: 'not_configured' }), { status: 500, headers: JSON_HEADERS });
    }
    return handle(request);
  },
};
