// Baseline for bench:http: Express answering 200 on a route that reads the body, nothing else.
import express from 'express';

const app = express();
app.post('/webhooks', express.raw({ type: '*/*', limit: '1mb' }), (req, res) => {
  res.status(200).json({ status: 'processed', bytes: req.body.length });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/webhooks`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
