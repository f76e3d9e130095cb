// The rack of `npm run bench:outage`, in its own process: an open-loop schedule (delivery i is
// dispatched at start + i / rate whatever the answers), each delivery sent as 3 HTTP requests with
// the same bytes: two at once (the same URL under two receiver names) and one 200 to 1,000 ms later
// (a proxy re-sending it). Each request is given up after 30 s, the rack's dispatch timeout; the
// answer is only counted, as the rack only logs it. Reports counts and the time to each 200.
import { Agent, request } from 'node:http';
import { createSignedRequestSync, createTestEvent } from '../../dist/testing.js';

// Gone with the bench: never left running.
process.on('disconnect', () => process.exit(0));
const { url, secret, deliveries, rate, runId } = JSON.parse(process.argv[2]);
const RACK_TIMEOUT_MS = 30_000;
const ACTION = 'app:budget:auto-shutdown:fired';
// Go's http.Client keeps connections alive and opens more as needed.
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
const target = new URL(url);

const answers = { 200: 0, 503: 0, other: 0, timeout: 0 };
const latencies = [];
let lateDispatchMaxMs = 0;

function send(headers, body) {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers, timeout: RACK_TIMEOUT_MS },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) latencies.push(performance.now() - started);
          answers[res.statusCode === 200 || res.statusCode === 503 ? res.statusCode : 'other']++;
          resolve();
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('rack timeout')));
    req.on('error', () => {
      answers.timeout++;
      resolve();
    });
    req.end(body);
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const inFlight = [];
const start = performance.now();
for (let i = 0; i < deliveries; i++) {
  const due = start + (i * 1000) / rate;
  const wait = due - performance.now();
  if (wait > 0) await sleep(wait);
  else lateDispatchMaxMs = Math.max(lateDispatchMaxMs, -wait);
  const event = createTestEvent(ACTION, { data: { tick_id: `${runId}-${i}`, app: `app-${i % 50}` } });
  const { headers, body } = createSignedRequestSync(event, { secrets: secret });
  const all = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  inFlight.push(
    send(all, body),
    send(all, body),
    sleep(200 + Math.random() * 800).then(() => send(all, body)),
  );
}
await Promise.all(inFlight);
latencies.sort((a, b) => a - b);
const at = (q) => (latencies.length === 0 ? null : Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]));
process.send({
  requests: deliveries * 3,
  answers,
  acceptP50Ms: at(0.5),
  acceptP99Ms: at(0.99),
  acceptMaxMs: latencies.length === 0 ? null : Math.round(latencies.at(-1)),
  lateDispatchMaxMs: Math.round(lateDispatchMaxMs),
});
agent.destroy();
process.disconnect();
