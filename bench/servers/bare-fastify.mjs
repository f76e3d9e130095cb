// Baseline for bench:http: Fastify answering 200 on a route that reads the body (as a Buffer).
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/webhooks', async (request) => ({ status: 'processed', bytes: request.body.length }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(`listening on http://127.0.0.1:${app.server.address().port}/webhooks`);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => app.close().then(() => process.exit(0)));
