// On-call pager: pages when an app's auto-shutdown lifecycle ENTERS "shut down" or "shutdown
// failed", and on every app:budget:cap, as a JSON POST to an incident-paging endpoint. Built on
// plain node:http.
//
// Run:  RACK_WEBHOOK_SECRETS=<key> PAGER_URL=https://pager.example.com/v1/events node examples/oncall-pager.mjs
// Env:  RACK_WEBHOOK_SECRETS  required; the rack's webhook_signing_key ("new,old" during a rotation)
//       PAGER_URL             required; receives {summary, severity, source, dedup_key, action, app, timestamp}
//       PORT                  default 3000 (0 = any free port)
//       HOST                  default 127.0.0.1
//       SHUTDOWN_DRAIN_MS     default 5000: after SIGTERM, how long requests are still answered before the listener closes
//       DATABASE_URL          optional; a postgres:// URL (needs `pg`): store deliveries in an inbox, run them
//                             with a worker, and send the inbox's alerts to the same URL (see below)
//       INBOX_TABLE           default rack_webhooks_inbox;  ALERT_INTERVAL_MS  default 30000
// Point the rack at http://<host>:<port>/webhooks. Every other path answers 404.
//
// Every delivery is folded into a rack state (createRackState), which orders each app's events by
// their own timestamps and applies each event once. Pages follow its transitions, not raw events:
// a copy of :fired, a late :armed arriving after its :fired, or a :fired arriving after its
// :restored (the app is back) changes no phase and pages nothing. The state, like the dedup
// store, lives in this process.
//
// If the pager does not accept a page (network error, timeout, non-2xx), the handler throws: the
// rack gets 500 handler_failed and the delivery's dedup claims are released, so a copy of it (the
// rack never retries, but a proxy or a manual re-send may) sends the page again.
import { createServer } from 'node:http';
import { createRackState, createReceiver, ROUTINE_ACTIONS } from 'rack-webhooks';
import { createNodeHandler, createShutdown } from 'rack-webhooks/node';

const secrets = process.env.RACK_WEBHOOK_SECRETS;
if (!secrets?.trim()) {
  console.error('RACK_WEBHOOK_SECRETS is not set: export the rack\'s webhook_signing_key ("new,old" during a key rotation).');
  process.exit(1);
}
let pagerUrl;
try {
  pagerUrl = new URL(process.env.PAGER_URL ?? '');
} catch {
  console.error('PAGER_URL is not set or not a URL: export the paging endpoint, e.g. PAGER_URL=https://pager.example.com/v1/events.');
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
    ignore: ROUTINE_ACTIONS,
    // Records never hold a body, a signature or a secret. Pages print their own line below.
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

// Entering one of these auto-shutdown phases pages, with this summary.
const PAGED_PHASES = {
  'shut-down': (data) =>
    `${data.app}: budget auto-shutdown FIRED, services scaled to zero (spend $${data.spend_usd} of $${data.cap_usd} cap)`,
  'shutdown-failed': (data) =>
    `${data.app}: budget auto-shutdown FAILED, services are still running (spend $${data.spend_usd} of $${data.cap_usd} cap)`,
};
// The spec pages on app:budget:cap only when the app's atCapAction is block-new-deploys or
// auto-shutdown; the event does not carry it. Filter here if you know your apps' settings.
const capSummary = (data) => `${data.app}: monthly budget cap reached`;

// The pager folds pages with one dedup_key into one incident. app:budget:cap has no tick_id.
const dedupKey = (event) => event.data.tick_id ?? `${event.action}:${event.data.rack}:${event.data.app}:${event.timestamp}`;

async function page(event, summary) {
  const { data } = event;
  const response = await fetch(pagerUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      summary: `[${data.rack}] ${summary}`,
      severity: 'critical',
      source: data.rack,
      dedup_key: dedupKey(event),
      action: event.action,
      app: data.app,
      timestamp: event.timestamp,
    }),
    signal: AbortSignal.timeout(10_000), // stay well inside the rack's 30 s dispatch timeout
  });
  await response.body?.cancel();
  if (!response.ok) throw new Error(`the pager answered HTTP ${response.status}`);
  console.log(`paged: ${event.action} app=${data.app} rack=${data.rack}${data.tick_id ? ` tick=${data.tick_id}` : ''}`);
}

// Pages owed but not yet accepted by the pager, by the action and dedup_key of the event that
// caused them. A transition is told once, so a page that failed stays owed until a copy of its
// delivery comes back.
const owed = new Map();
const owedKey = (event) => `${event.action} ${dedupKey(event)}`;

const state = createRackState();
state.onTransition(({ lifecycle, to, event }) => {
  if (lifecycle === 'auto-shutdown' && Object.hasOwn(PAGED_PHASES, to))
    owed.set(owedKey(event), { event, summary: PAGED_PHASES[to](event.data) });
});

receiver.onAny(async (event) => {
  state.apply(event); // tells onTransition synchronously, once per change of an app's phase
  const key = owedKey(event);
  const due = owed.get(key);
  if (due === undefined) return; // no page owed: answered 200
  owed.delete(key); // taken, so a concurrent copy does not send it too
  try {
    await page(due.event, due.summary);
  } catch (error) {
    owed.set(key, due);
    throw error;
  }
});
// A cap crossing is no phase of the lifecycle: it pages per event; the pager's dedup_key folds copies.
receiver.on('app:budget:cap', (event) => page(event, capSummary(event.data)));
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
    onAlert: httpAlertSink(pagerUrl, {
      timeoutMs: 10_000,
      body: (alert) => ({
        summary: `[rack-webhooks] ${alert.summary}`,
        severity: alert.severity,
        source: alert.table,
        // One incident, one page: its resolve closes the page its open opened.
        dedup_key: `rack-webhooks:${alert.table}:${alert.incidentId}`,
        event_action: alert.status === 'open' ? 'trigger' : 'resolve',
        rule: alert.rule,
        since: alert.since,
        fields: alert.fields,
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
