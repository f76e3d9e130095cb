// Baseline for bench:http: Express answering 200 on a route that reads the body, as cheaply as
// Express allows (a plain stream read and a raw write: no body-parser, no ETag), so the ratio
// charges the example with everything it does beyond that.
import express from 'express';
import { hmacMatches } from './hmac-check.mjs';

const app = express();
app.post('/webhooks', (req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const bytes = body.length;
    if (!hmacMatches(req.headers['service-signature'], body)) {
      res.writeHead(401, { 'content-type': 'application/json; charset=utf-8' });
      res.end('{"error":"signature_mismatch"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(`{"status":"processed","bytes":${bytes}}`);
  });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/webhooks`);
});
for (const signal of ['SIGTERM', 'SIGINT'])
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
