// The inbox with each real client's types installed: a handler's `context.transaction` is that client's transaction.
import { PGlite, type Transaction } from '@electric-sql/pglite';
import pg from 'pg';
import postgres from 'postgres';
import { createReceiver } from 'rack-webhooks';
import { createNodeHandler } from 'rack-webhooks/node';
import { createInbox } from 'rack-webhooks/inbox';

const pool = new pg.Pool({ connectionTimeoutMillis: 5000 });
const fromPool = createReceiver({ secrets: 'k', inbox: createInbox({ database: pool }) });
fromPool.on('app:budget:auto-shutdown:fired', async (event, { delivery, transaction }) => {
  const client: pg.PoolClient = transaction;
  await client.query('INSERT INTO pages (delivery_id, app) VALUES ($1, $2)', [delivery.id, event.data.app]);
});
createNodeHandler(fromPool);

const sql = postgres();
createReceiver({ secrets: 'k', inbox: createInbox({ database: sql }) }).on('app:budget:cap', async (_event, { transaction }) => {
  const tx: postgres.TransactionSql = transaction;
  await tx`SELECT 1`;
});

const lite = new PGlite();
createReceiver({ secrets: 'k', inbox: createInbox({ database: lite }) }).onAny(async (_event, { transaction }) => {
  const tx: Transaction = transaction;
  await tx.query('SELECT 1');
});
