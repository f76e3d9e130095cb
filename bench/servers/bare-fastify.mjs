// Baseline for bench:http: Fastify answering 200 on a route that reads the body (as a Buffer), as
// cheaply as Fastify allows (a pre-serialised reply, no schema, no logger), so the ratio charges
// the example with everything it does beyond that.
import Fastify from 'fastify';
import { hmacMatches } from './hmac-check.mjs';

const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/webhooks', (request, reply) => {
  if (!hmacMatches(request.headers['service-signature'], request.body)) {
    reply.code(401).header('content-type', 'application/json; charset=utf-8').send('{"error":"signature_mismatch"}');
    return;
  }
  reply.code(200).header('content-type', 'application/json; charset=utf-8').send(`{"status":"processed","bytes":${request.body.length}}`);
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(`listening on http://127.0.0.1:${app.server.address().port}/webhooks`);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => app.close().then(() => process.exit(0)));
