// Chat notifier: posts one readable line per event to a chat incoming-webhook (Slack, Mattermost,
// Google Chat, ... any endpoint taking {"text": "..."}). Every known action is posted except the
// routine ones (auto-shutdown :noop and :simulated). Built on plain node:http.
//
// Run:  RACK_WEBHOOK_SECRETS=<key> CHAT_WEBHOOK_URL=https://chat.example.com/hooks/T0/B0/x node examples/chat-notifier.mjs
// Env:  RACK_WEBHOOK_SECRETS  required; the rack's webhook_signing_key ("new,old" during a rotation)
//       CHAT_WEBHOOK_URL      required; receives {"text": "[rack] app: ..."}
//       PORT                  default 3000 (0 = any free port)
//       HOST                  default 127.0.0.1
//       SHUTDOWN_DRAIN_MS     default 5000: after SIGTERM, how long requests are still answered before the listener closes
//       DATABASE_URL          optional; a postgres:// URL (needs `pg`): store deliveries in an inbox, run them
//                             with a worker, and send the inbox's alerts to the same URL (see below)
//       INBOX_TABLE           default rack_webhooks_inbox;  ALERT_INTERVAL_MS  default 30000
// Point the rack at http://<host>:<port>/webhooks. Every other path answers 404.
import { createServer } from 'node:http';
import { ACTION_DESCRIPTIONS, createReceiver, ROUTINE_ACTIONS, WEBHOOK_ACTIONS } from 'rack-webhooks';
import { createNodeHandler, createShutdown } from 'rack-webhooks/node';

const secrets = process.env.RACK_WEBHOOK_SECRETS;
if (!secrets?.trim()) {
  console.error('RACK_WEBHOOK_SECRETS is not set: export the rack\'s webhook_signing_key ("new,old" during a key rotation).');
  process.exit(1);
}
let chatUrl;
try {
  chatUrl = new URL(process.env.CHAT_WEBHOOK_URL ?? '');
} catch {
  console.error('CHAT_WEBHOOK_URL is not set or not a URL: export the chat incoming-webhook URL.');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a whole number from 0 to 65535, got ${JSON.stringify(process.env.PORT)}.`);
  process.exit(1);
}
const host = process.env.HOST || '127.0.0.1';

// With DATABASE_URL, every delivery is committed to an inbox before the 200 and a worker runs the
// handlers (retried when the endpoint fails), and inbox.watch() sends the operator alerts (deliveries
// gone dead, a backlog, no live worker, refusals such as a wrongly rotated key, a silent rack, an
// auto-shutdown countdown that never ended) once when each incident opens and once when it resolves.
let inbox, pool;
if (process.env.DATABASE_URL) {
  const [{ default: pg }, { createInbox }] = await Promise.all([import('pg'), import('rack-webhooks/inbox')]);
  pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 5000 });
  pool.on('error', () => {}); // an idle connection's error; the next query reports it
  inbox = createInbox({ database: pool, table: process.env.INBOX_TABLE || undefined });
  try {
    await inbox.migrate();
  } catch (error) {
    console.error(`DATABASE_URL: ${error.message}`);
    process.exit(1);
  }
}

let receiver;
try {
  receiver = createReceiver({
    secrets,
    ...(inbox === undefined ? {} : { inbox }),
    ignore: ROUTINE_ACTIONS, // answered 200 "ignored": nothing is posted
    // Records never hold a body, a signature or a secret.
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

const tick = (data) => (data.tick_id ? ` (tick ${data.tick_id})` : '');
const by = (data) => (data.actor && data.actor !== 'system' ? ` by ${data.actor}` : '');
const clip = (text, max = 200) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** What follows "[rack] app: " for an action. Actions without an entry use the generic line below. */
const FORMATTERS = {
  'app:budget:auto-shutdown:fired': (d) => `auto-shutdown FIRED${tick(d)}`,
  'app:budget:auto-shutdown:failed': (d) => `auto-shutdown FAILED, services still running${tick(d)}`,
  'app:budget:auto-shutdown:armed': (d) =>
    `auto-shutdown armed, services stop at ${d.expected_shutdown_at} (spend $${d.spend_usd} of $${d.cap_usd})${tick(d)}`,
  'app:budget:auto-shutdown:cancelled': (d) => `auto-shutdown cancelled: ${d.cancel_reason}${by(d)}${tick(d)}`,
  'app:budget:auto-shutdown:restored': (d) => `services restored after auto-shutdown${by(d)}${tick(d)}`,
  'app:budget:cap': () => 'monthly budget cap reached',
  'app:budget:threshold': () => 'budget alert threshold crossed',
  'app:budget:set': (d) => `budget set${by(d)}: cap $${d.prev_cap_usd} -> $${d.new_cap_usd}, at cap: ${d.new_action}`,
  'build:create': (d) => (d.message ? `build FAILED: ${clip(d.message)}` : `build ${d.id} started${by(d)}`),
  'app:promote:completed': (d) => `release ${d.id} rolled out${by(d)}`,
  'app:promote:errored': (d) => `release ${d.id} rollout FAILED: ${clip(d.message ?? 'no detail')}`,
};

/** The generic line: the catalog's own description of the action. */
const generic = (event) => `${event.action}${by(event.data)}: ${ACTION_DESCRIPTIONS[event.action] ?? 'event received'}`;

function formatLine(event) {
  const { data } = event;
  const app = data.app ?? data.name ?? '-'; // app:create names the app in data.name
  const format = FORMATTERS[event.action];
  return `[${data.rack ?? 'rack'}] ${app}: ${format ? format(data) : generic(event)}`;
}

async function notify(event) {
  const text = formatLine(event);
  const response = await fetch(chatUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
    signal: AbortSignal.timeout(10_000),
  });
  await response.body?.cancel();
  // Throwing answers the rack 500 and releases the dedup claims, so a copy can still be posted.
  if (!response.ok) throw new Error(`the chat webhook answered HTTP ${response.status}`);
}

// Every action of the catalog (routine ones never get here: `ignore` drops them first).
// Unknown actions from a newer rack are answered 200 "ignored", as the spec asks.
receiver.on(WEBHOOK_ACTIONS, notify);
receiver.onError((error) => {
  console.error(`[rack-webhooks] ${error.code}: ${error.message}`);
});

let worker;
let watcher;
if (inbox !== undefined) {
  const { httpAlertSink } = await import('rack-webhooks/inbox');
  worker = inbox.work(receiver);
  watcher = inbox.watch({
    intervalMs: Number(process.env.ALERT_INTERVAL_MS ?? 30_000),
    onAlert: httpAlertSink(chatUrl, {
      timeoutMs: 10_000,
      body: (alert) => ({
        text: `[rack-webhooks] ${alert.status === 'open' ? `${alert.severity.toUpperCase()}: ` : ''}${alert.summary}`,
      }),
    }),
  });
}

const handleWebhook = createNodeHandler(receiver);
const server = createServer((req, res) => {
  const { pathname } = new URL(req.url ?? '/', 'http://localhost');
  if (pathname !== '/webhooks') {
    res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ error: 'not_found' }));
    return;
  }
  handleWebhook(req, res).catch((error) => {
    console.error(`[rack-webhooks] error: ${error.message}`);
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ error: 'internal_error' }));
  });
});

server.on('error', (error) => {
  console.error(`Could not listen on ${host}:${port}: ${error.message}`);
  process.exit(1);
});
server.listen(port, host, () => {
  const { port: actual } = server.address();
  console.log(`listening on http://${host.includes(':') ? `[${host}]` : host}:${actual}/webhooks`);
});

// SIGTERM or SIGINT: answers still come for SHUTDOWN_DRAIN_MS (each with Connection: close, while a load
// balancer moves away), then the listener closes and the requests in flight finish; the same signal again exits at once.
// Then the worker finishes what it runs, the watcher stops, the inbox writes its last counts, the pool closes.
createShutdown(server, {
  drainMs: Number(process.env.SHUTDOWN_DRAIN_MS ?? 5000),
  worker,
  inbox,
  close: [() => watcher?.stop(), () => pool?.end()],
});
