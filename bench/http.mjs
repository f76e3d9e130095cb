// npm run bench:http: requests per second of the Express and Fastify examples (verification,
// parsing, memory dedup, handlers) as a ratio to the same framework answering 200 on a bare route
// that reads the body. Every request is a distinct, correctly signed delivery. Servers run in their
// own processes; autocannon drives them from this one.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { signSync } from '../dist/index.js';

const DURATION = Number(process.env.BENCH_HTTP_SECONDS ?? 8);
const CONNECTIONS = 32;
const secret = randomBytes(32).toString('hex');

function start(file, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { env: { ...process.env, ...env, PORT: '0', RACK_WEBHOOK_SECRETS: secret }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) {
        child.stdout.removeAllListeners('data');
        child.stdout.resume(); // keep draining: the examples log a line per handled event
        resolve({ url: match[1], stop: () => new Promise((done) => { child.once('exit', done); child.kill('SIGTERM'); }) });
      }
    });
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code} before listening`)));
  });
}

/** Distinct deliveries: the on-call fixture with a unique service per request (a fresh replay key each). */
function pool(size) {
  const base = JSON.parse(readFileSync(new URL('../test/fixtures/events/app.scale-override.toggled.json', import.meta.url), 'utf8'));
  const t = Math.floor(Date.now() / 1000);
  return Array.from({ length: size }, (_, i) => {
    const body = JSON.stringify({ ...base, data: { ...base.data, service: `svc-${i}` } });
    return { body, headers: { 'content-type': 'application/json', 'service-signature': signSync(body, { secrets: secret, timestamp: t }) } };
  });
}

async function measure(url, deliveries, duration = DURATION) {
  let next = 0;
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration,
    requests: [{ setupRequest: (request) => ({ ...request, ...deliveries[next++ % deliveries.length] }) }],
  });
  const non2xx = result.non2xx + result.errors;
  return { rps: result.requests.average, non2xx, total: result.requests.total };
}

// Enough distinct deliveries that neither the warm-up nor the measurement sends one twice (a repeat
// would be a cheap 'duplicate' answer and flatter the example).
const WARM_UP_POOL = 60_000;
const deliveries = pool(WARM_UP_POOL + 200_000);
console.log(`\n### HTTP: requests/s, ${CONNECTIONS} connections, ${DURATION} s each, one distinct signed delivery per request\n`);
console.log('| framework | bare route (reads body) | bare route + HMAC check only | example (verify + parse + dedup + handlers) | example / bare (bar) | HMAC only / bare | non-2xx |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
let ok = true;
for (const [name, framework] of [['Express 5', 'express'], ['Fastify 5', 'fastify']]) {
  const results = {};
  for (const [kind, file] of [
    ['bare', `./servers/bare-${framework}.mjs`],
    // The least any verifying receiver does: the bare route plus one createHmac and timingSafeEqual.
    ['hmac', `./servers/bare-${framework}.mjs`],
    ['example', `../examples/${framework}.mjs`],
  ]) {
    const server = await start(new URL(file, import.meta.url).pathname, kind === 'hmac' ? { BARE_VERIFY_HMAC: '1' } : {});
    await measure(server.url, deliveries.slice(0, WARM_UP_POOL), 2); // warm-up, on deliveries the measurement never sends
    results[kind] = await measure(server.url, deliveries.slice(WARM_UP_POOL));
    await server.stop();
    if (results[kind].total > deliveries.length - WARM_UP_POOL) throw new Error(`${name} ${kind}: the pool ran out; a delivery was sent twice`);
  }
  const ratio = results.example.rps / results.bare.rps;
  const hmacRatio = results.hmac.rps / results.bare.rps;
  const fmt = (rps) => Math.round(rps).toLocaleString('en-US');
  const non2xx = results.bare.non2xx + results.hmac.non2xx + results.example.non2xx;
  console.log(`| ${name} | ${fmt(results.bare.rps)} | ${fmt(results.hmac.rps)} | ${fmt(results.example.rps)} | ${ratio.toFixed(2)} | ${hmacRatio.toFixed(2)} | ${non2xx} |`);
  ok = ok && ratio >= 0.85 && non2xx === 0;
  console.log(`${ratio >= 0.85 ? 'PASS' : 'MISS'}  ${name} example / bare route: ${ratio.toFixed(2)} (bar >= 0.85); HMAC check alone: ${hmacRatio.toFixed(2)}`);
}
process.exitCode = ok ? 0 : 3;
