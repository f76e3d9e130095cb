// node bench/fastify-inject.mjs (after npm run build): the Fastify comparison without the network.
// Four apps take the same distinct signed deliveries through fastify.inject, round-robin, so what
// is left is each route's own CPU: a bare route, the bare route plus one createHmac, the bare route
// calling receiver.receive(), and the rack-webhooks plugin.
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { createReceiver, signSync } from 'rack-webhooks';
import rackWebhooks from 'rack-webhooks/fastify';

const secret = randomBytes(32).toString('hex');
const base = JSON.parse(readFileSync(new URL('../test/fixtures/events/app.scale-override.toggled.json', import.meta.url), 'utf8'));
const t = Math.floor(Date.now() / 1000);
const ROUNDS = 5;
const PER_ROUND = 8_000;
const deliveries = Array.from({ length: 4 * ROUNDS * PER_ROUND }, (_, i) => {
  const body = JSON.stringify({ ...base, data: { ...base.data, service: `svc-${i}` } });
  return { body, headers: { 'content-type': 'application/json', 'service-signature': signSync(body, { secrets: secret, timestamp: t }) } };
});

function bareApp(handler) {
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post('/webhooks', handler);
  return app;
}
const receiver = createReceiver({ secrets: secret });
const apps = {
  'bare route': bareApp(async (request) => ({ status: 'processed', bytes: request.body.length })),
  'bare route + createHmac': bareApp(async (request) => {
    const header = request.headers['service-signature'];
    createHmac('sha256', secret)
      .update(`${header.slice(2, header.indexOf(','))}.`)
      .update(request.body)
      .digest();
    return { status: 'processed' };
  }),
  'bare route + receiver.receive()': bareApp(async (request) => ({
    status: (await receiver.receive({ body: request.body, headers: request.headers })).outcome,
  })),
  'rack-webhooks/fastify plugin': (() => {
    const app = Fastify({ logger: false });
    app.register(rackWebhooks, { receiver: createReceiver({ secrets: secret }), path: '/webhooks' });
    return app;
  })(),
};
for (const app of Object.values(apps)) await app.ready();

let next = 0;
const samples = Object.fromEntries(Object.keys(apps).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, app] of Object.entries(apps)) {
    const started = performance.now();
    for (let i = 0; i < PER_ROUND; i++) {
      const { body, headers } = deliveries[next++];
      const reply = await app.inject({ method: 'POST', url: '/webhooks', payload: body, headers });
      if (reply.statusCode !== 200) throw new Error(`${name}: ${reply.statusCode} ${reply.body}`);
    }
    samples[name].push(((performance.now() - started) * 1000) / PER_ROUND);
  }
}
console.log(
  `\n### Fastify in-process (fastify.inject), µs per request, median of ${ROUNDS} rounds of ${PER_ROUND.toLocaleString('en-US')}\n`,
);
console.log('| route | µs/request |\n|---|---:|');
for (const [name, values] of Object.entries(samples))
  console.log(`| ${name} | ${values.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)].toFixed(1)} |`);
