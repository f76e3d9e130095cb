// Express receiver with the inbox: every verified delivery is committed to PostgreSQL before the 200,
// and a worker in this same process runs the handlers from there, with retries. A handler that
// throws, a crash or a deploy loses nothing: the delivery waits in the table for its next attempt.
//
// Run:  RACK_WEBHOOK_SECRETS=<key> DATABASE_URL=postgres://user@host/db node examples/express-inbox.mjs
// Env:  RACK_WEBHOOK_SECRETS  required; the rack's webhook_signing_key ("new,old" during a rotation)
//       DATABASE_URL          PostgreSQL (npm install pg); not set: PGlite, PostgreSQL in WebAssembly
//                             with its data in INBOX_DIR (npm install @electric-sql/pglite)
//       INBOX_DIR             PGlite's data directory, default ./inbox-data (owned by the first process; others go through it)
//       INBOX_TABLE           default rack_webhooks_inbox (or schema.table)
//       PORT                  default 3000 (0 = any free port)
//       HOST                  default 127.0.0.1; 0.0.0.0 in a container (or to take deliveries from other machines)
//       SHUTDOWN_DRAIN_MS     default 5000: after SIGTERM, how long /readyz answers 503 while deliveries
//                             are still taken, so that the load balancer moves away first
//       REUSE_PORT            1: listen with SO_REUSEPORT, so that a new process can take the port
//                             before this one lets go (Node >= 22.12 or >= 23.1, Linux or FreeBSD)
// Point the rack at http://<host>:<port>/webhooks; a load balancer's readiness check at /readyz
// (200 while it takes deliveries, 503 from SIGTERM on), liveness at /healthz.
// SIGTERM or SIGINT: /readyz answers 503 at once while deliveries are still taken for
// SHUTDOWN_DRAIN_MS, then the listener closes, requests in flight finish, the running handlers
// finish, the inbox writes its last counts, the database closes, exit 0; what was accepted and not
// yet handled stays pending in the table and runs at the next start. The same signal again exits at once.
import express from 'express';
import { createReceiver, ROUTINE_ACTIONS } from 'rack-webhooks';
import { webhookMiddleware } from 'rack-webhooks/express';
import { createInbox, healthHandler, openPGlite } from 'rack-webhooks/inbox';
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
const drainMs = Number(process.env.SHUTDOWN_DRAIN_MS ?? 5000);
if (!Number.isInteger(drainMs) || drainMs < 0) {
  console.error(`SHUTDOWN_DRAIN_MS must be a whole number of ms >= 0, got ${JSON.stringify(process.env.SHUTDOWN_DRAIN_MS)}.`);
  process.exit(1);
}
const reusePort = process.env.REUSE_PORT === '1';
if (reusePort) {
  // Older Node ignores the option, and a second process then fails with EADDRINUSE.
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (!(major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12))) {
    console.error(
      `REUSE_PORT=1 needs Node >= 22.12 or >= 23.1 (this is ${process.version}); on Node 20 run examples/supervisor.mjs for restarts in place.`,
    );
    process.exit(1);
  }
}

// The database: the client you already have. pg's Pool needs one connection per running handler,
// one for the worker's LISTEN and one for receive(): max 10 leaves room for concurrency 4.
let database, closeDatabase, where;
if (process.env.DATABASE_URL) {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, connectionTimeoutMillis: 5000 });
  pool.on('error', (error) => console.error(`[database] idle connection lost: ${error.message}`)); // else pg ends the process
  database = pool;
  closeDatabase = () => pool.end();
  where = 'PostgreSQL (DATABASE_URL)';
} else {
  const directory = process.env.INBOX_DIR || './inbox-data';
  // The first process owns the directory; `rack-webhooks inbox list --database ./inbox-data` and
  // other processes reach its data through this one while it runs.
  const db = await openPGlite(directory);
  database = db;
  closeDatabase = () => db.close(); // also gives the directory up
  where = `PGlite in ${directory} (${db.role})`;
}

let inbox;
try {
  inbox = createInbox({ database, table: process.env.INBOX_TABLE || undefined });
  await inbox.migrate(); // idempotent; safe from every process at start-up
} catch (error) {
  console.error(`Cannot open the inbox on ${where}: ${error.message}`);
  await closeDatabase().catch(() => {});
  process.exit(1);
}

let receiver;
try {
  receiver = createReceiver({
    secrets,
    inbox,
    ignore: ROUTINE_ACTIONS, // :noop and :simulated: stored as 'ignored', no handler runs
    // Records never hold a body, a signature or a secret. Accepted deliveries and successful runs
    // are quiet here; the handlers print their own summary.
    logger: (record) => {
      if (record.level === 'info') return;
      const action = record.action ? ` ${record.action}` : '';
      console.error(`[rack-webhooks] ${record.level} ${record.event}${action}${record.code ? ` (${record.code})` : ''}: ${record.message}`);
    },
  });
} catch (error) {
  console.error(`Invalid RACK_WEBHOOK_SECRETS: ${error.message}`);
  await closeDatabase().catch(() => {});
  process.exit(1);
}

// Handlers run in the worker, not in the request. A handler that throws is retried with backoff
// (5 attempts, then the delivery is 'dead' until `rack-webhooks inbox retry`). Writes made through
// `context.transaction` commit together with "done": e.g.
//   await transaction.query('INSERT INTO pages (delivery_id, app) VALUES ($1, $2)', [delivery.id, event.data.app]);
// For an outside service (a pager, a chat API), pass delivery.id as its idempotency key.
receiver.on('app:budget:auto-shutdown:fired', (event, { delivery }) => {
  const { app, rack, tick_id, spend_usd, cap_usd } = event.data;
  console.log(
    `auto-shutdown fired: app=${app} rack=${rack} tick=${tick_id} (spend $${spend_usd} of $${cap_usd} cap) delivery=${delivery.id}`,
  );
});
receiver.on('app:budget:auto-shutdown:failed', (event, { delivery }) => {
  const { app, rack, tick_id } = event.data;
  console.log(`auto-shutdown FAILED, services still running: app=${app} rack=${rack} tick=${tick_id} delivery=${delivery.id}`);
});
receiver.on('app:budget:cap', (event, { delivery }) => {
  console.log(`budget cap reached: app=${event.data.app} rack=${event.data.rack} delivery=${delivery.id}`);
});
// A handler's own error (the logger's records leave it out: it could quote anything). Refusals of
// forged or malformed deliveries are already logged above.
receiver.onError((error) => {
  if (error.code !== 'handler_failed') return;
  for (const cause of error.errors) console.error(`[handler] ${error.event?.action ?? 'a delivery'}: ${cause?.message ?? String(cause)}`);
});

const app = express();
// The webhook route comes FIRST, before any body parser: the signature covers the exact bytes.
// It answers 200 {"status":"accepted"} once the row is committed.
app.all('/webhooks', webhookMiddleware(receiver));
app.use(express.json()); // the rest of your app

const worker = inbox.work(receiver, { concurrency: 4, maxAttempts: 5 });

const server = app.listen({ port, host, ...(reusePort ? { reusePort } : {}) }, (error) => {
  if (error) {
    console.error(`Could not listen on ${host}:${port}: ${error.message}`);
    process.exit(1);
  }
  const { port: actual } = server.address();
  console.log(`inbox on ${where}, worker running`);
  console.log(`listening on http://${host.includes(':') ? `[${host}]` : host}:${actual}/webhooks`);
});

// On SIGTERM or SIGINT: unready at once, deliveries still taken for SHUTDOWN_DRAIN_MS (every answer
// with Connection: close), then the listener closes and the requests in flight finish (a delivery
// answered 200 is in the table), the worker finishes what it runs (nothing is left claimed), the
// inbox writes its last counts, and the database both use closes last.
const shutdown = createShutdown(server, {
  drainMs,
  requestTimeoutMs: 10_000,
  worker,
  workerTimeoutMs: 10_000,
  inbox,
  close: closeDatabase,
  logger: (record) => console.log(`[shutdown] ${record.message}`),
});

// Readiness: 200 while this process takes deliveries and its database answers; 503 from SIGTERM on.
const probes = healthHandler(inbox, { ready: shutdown.ready });
app.get('/readyz', probes.ready);
app.get('/healthz', probes.live); // liveness: the process answers (a database outage must not restart it)
