import pg from 'pg';
import { createInbox } from 'rack-webhooks/inbox';
import { workerStatements, quotedTables } from './bench/inbox-floors.mjs';
const url = 'postgres://postgres@127.0.0.1:5432/test';
const c = new pg.Client(url); await c.connect();
await c.query('DROP SCHEMA IF EXISTS pt CASCADE; CREATE SCHEMA pt');
await createInbox({ database: c, table: 'pt.deliveries' }).migrate();
await c.query(`INSERT INTO pt.deliveries (body, signature, signed_at, secret_index, action, event_time, event_ns, body_key, state, run_at, app)
  SELECT convert_to(repeat('x', 1024), 'UTF8'), 'sig', 1, 0, 'a', 'now', g, 'k' || g, 'pending', now(), NULL FROM generate_series(1, 10000) g`);
await c.query('ANALYZE pt.deliveries; ANALYZE pt.deliveries_queue');
const { deliveries, attempts, queue } = quotedTables('pt.deliveries');
const sql = workerStatements(deliveries, attempts, queue);
const lit = (text, vals) => text.replace(/\$(\d)/g, (_, n) => vals[Number(n) - 1]);
for (const [name, text, vals] of [['claim', sql.claim, ['8', "'w'", '30']], ['done', sql.done, ['1', "'w'", '1']]]) {
  const times = [];
  for (let i = 0; i < 8; i++) { const { rows } = await c.query(`EXPLAIN (SUMMARY ON) ${lit(text, vals)}`); times.push(rows.map((r) => r['QUERY PLAN']).find((l) => l.startsWith('Planning Time'))); }
  console.log(name, times.slice(2).join(' | '));
}
await c.query('DROP SCHEMA pt CASCADE'); await c.end();
