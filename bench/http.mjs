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

function start(file) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { env: { ...process.env, PORT: '0', RACK_WEBHOOK_SECRETS: secret }, stdio: ['ignore', 'pipe', 'inherit'] });
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

const deliveries = pool(200_000);
console.log(`\n### HTTP: requests/s, ${CONNECTIONS} connections, ${DURATION} s each, one distinct signed delivery per request\n`);
console.log('| framework | bare route (reads body) | example (verify + parse + dedup + handlers) | ratio | non-2xx |');
console.log('|---|---:|---:|---:|---:|');
let ok = true;
for (const [name, bare, example] of [
  ['Express 5', './servers/bare-express.mjs', '../examples/express.mjs'],
  ['Fastify 5', './servers/bare-fastify.mjs', '../examples/fastify.mjs'],
]) {
  const results = {};
  for (const [kind, file] of [['bare', bare], ['example', example]]) {
    const server = await start(new URL(file, import.meta.url).pathname);
    await measure(server.url, deliveries.slice(0, 10_000), 2); // warm-up, on deliveries the measurement never sends
    results[kind] = await measure(server.url, deliveries.slice(10_000));
    await server.stop();
  }
  const ratio = results.example.rps / results.bare.rps;
  console.log(`| ${name} | ${Math.round(results.bare.rps).toLocaleString('en-US')} | ${Math.round(results.example.rps).toLocaleString('en-US')} | ${ratio.toFixed(2)} | ${results.bare.non2xx + results.example.non2xx} |`);
  ok = ok && ratio >= 0.85 && results.example.non2xx === 0;
  console.log(`${ratio >= 0.85 ? 'PASS' : 'MISS'}  ${name} example / bare route: ${ratio.toFixed(2)} (bar >= 0.85)`);
}
process.exitCode = ok ? 0 : 3;
