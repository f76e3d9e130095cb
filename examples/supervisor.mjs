// Restarts a receiver IN PLACE without refusing a single connection, on Node 20 and later: the
// node:cluster primary (this process) holds the listening socket for the whole time, and the
// worker process behind it is replaced: the new one starts and listens, THEN the old one gets
// SIGTERM and drains (createShutdown: it answers what reaches it, with Connection: close, then
// closes its listener). The primary hands every new connection to a worker that still listens;
// one handed to the old worker as it closes goes to the new one instead. Linux, macOS; not Windows.
//
// For one instance (a VM, a systemd unit) that is upgraded in place. Behind a load balancer
// (several replicas, Kubernetes) use rolling deploys instead: see docs/deploying.md.
//
// Run:  RACK_WEBHOOK_SECRETS=<key> DATABASE_URL=postgres://user@host/db node examples/supervisor.mjs
// Env:  every variable of the supervised script (examples/express-inbox.mjs: RACK_WEBHOOK_SECRETS,
//       DATABASE_URL, INBOX_TABLE, PORT, HOST, SHUTDOWN_DRAIN_MS, ...), passed on to it, plus
//       SUPERVISED_SCRIPT   the receiver to run, default express-inbox.mjs beside this file
// Signals: SIGHUP       replace the worker (e.g. after `git pull` or `npm ci`: the new worker loads the new code)
//          SIGTERM/INT  shut the worker down (it drains), then exit with its exit code
// A worker that dies on its own is started again at once.
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';

if (process.platform === 'win32') {
  console.error('supervisor.mjs needs round-robin scheduling of node:cluster, which Windows does not do well; use a rolling deploy.');
  process.exit(1);
}
// The primary accepts each connection and hands it to a worker that listens (before any fork).
cluster.schedulingPolicy = cluster.SCHED_RR;
cluster.setupPrimary({ exec: process.env.SUPERVISED_SCRIPT || fileURLToPath(new URL('./express-inbox.mjs', import.meta.url)) });

const log = (message) => console.log(`[supervisor] ${message}`);

/** Forks a worker; resolves once it listens, rejects if it exits first. */
function startWorker() {
  return new Promise((resolve, reject) => {
    const worker = cluster.fork();
    const early = (code, signal) =>
      reject(new Error(`worker ${worker.process.pid} exited (code ${code}, signal ${signal}) before listening`));
    worker.once('exit', early);
    worker.once('listening', () => {
      worker.off('exit', early);
      resolve(worker);
    });
  });
}

/** SIGTERM to a worker (it drains and closes); resolves with how it exited. */
function stopWorker(worker) {
  return new Promise((resolve) => {
    if (worker.isDead()) return resolve({ code: worker.process.exitCode, signal: worker.process.signalCode });
    worker.once('exit', (code, signal) => resolve({ code, signal }));
    worker.process.kill('SIGTERM');
  });
}

let current;
let replacing = false;
let stopping = false;

try {
  current = await startWorker();
} catch (error) {
  console.error(`[supervisor] ${error.message}`);
  process.exit(1);
}
log(`worker ${current.process.pid} serving; SIGHUP replaces it in place, SIGTERM stops it`);

process.on('SIGHUP', async () => {
  if (replacing || stopping) return log(`SIGHUP ignored: ${stopping ? 'stopping' : 'a replacement is under way'}`);
  replacing = true;
  try {
    const next = await startWorker();
    const old = current;
    current = next;
    log(`worker ${next.process.pid} listening; draining worker ${old.process.pid}`);
    const { code, signal } = await stopWorker(old);
    log(`worker ${old.process.pid} replaced by ${next.process.pid} (old exited with code ${code}${signal ? `, signal ${signal}` : ''})`);
  } catch (error) {
    console.error(`[supervisor] the new worker did not start, worker ${current.process.pid} keeps serving: ${error.message}`);
  } finally {
    replacing = false;
  }
});

// A worker that died on its own (not one being replaced or stopped) is started again.
cluster.on('exit', (worker, code, signal) => {
  if (worker !== current || stopping) return;
  console.error(`[supervisor] worker ${worker.process.pid} died (code ${code}, signal ${signal}); starting another`);
  startWorker().then(
    (next) => (current = next),
    (error) => {
      console.error(`[supervisor] ${error.message}; exiting`);
      process.exit(1);
    },
  );
});

async function stop(signal) {
  if (stopping) return; // the worker drains; a terminal's second Ctrl-C reaches it directly
  stopping = true;
  log(`${signal}: stopping worker ${current.process.pid}`);
  const { code } = await stopWorker(current);
  process.exit(code ?? 1);
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
