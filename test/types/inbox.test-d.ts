import type { PGlite, Transaction } from '@electric-sql/pglite';
import type { Client, Pool, PoolClient } from 'pg';
import type { Sql, TransactionSql } from 'postgres';
import { describe, expectTypeOf, it } from 'vitest';
import { createNodeHandler } from '../../src/adapters/node.js';
import { createFetchHandler, WebhookMountError } from '../../src/adapters/web.js';
import { createReceiver, type AppBudgetCapEvent, type ReceiveResult } from '../../src/index.js';
import {
  connectReceiver,
  createInbox,
  type DeliveryInbox,
  type DeliveryToStore,
  type Inbox,
  type StoredDeliveryDetail,
  type StoredRow,
  type Worker,
} from '../../src/inbox.js';

declare const pool: Pool;
declare const client: Client;
declare const sql: Sql;
declare const pglite: PGlite;

describe('inbox types', () => {
  it('context.transaction is a client of the same kind as the database', () => {
    createReceiver({ secrets: 'k', inbox: createInbox({ database: pool }) }).on('app:budget:cap', (event, context) => {
      expectTypeOf(event).toEqualTypeOf<AppBudgetCapEvent>();
      expectTypeOf(context.transaction).toEqualTypeOf<PoolClient>();
      expectTypeOf(context.delivery).toEqualTypeOf<{
        readonly id: string;
        readonly attempt: number;
        readonly origin: 'received' | 'reconciled';
      }>();
    });
    createReceiver({ secrets: 'k', inbox: createInbox({ database: client }) }).onAny((_event, context) => {
      expectTypeOf(context.transaction).toEqualTypeOf<Client>();
    });
    createReceiver({ secrets: 'k', inbox: createInbox({ database: sql }) }).on('app:*', (_event, context) => {
      // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- postgres.js's own default type parameter
      expectTypeOf(context.transaction).toEqualTypeOf<TransactionSql<{}>>();
    });
    createReceiver({ secrets: 'k', inbox: createInbox({ database: pglite }) }).on('app:budget:cap', (_event, context) => {
      expectTypeOf(context.transaction).toEqualTypeOf<Transaction>();
    });
  });

  it('without an inbox a handler has no context', () => {
    createReceiver({ secrets: 'k' }).on('app:budget:cap', (_event, context) => {
      expectTypeOf(context).toEqualTypeOf<undefined>();
    });
  });

  it('an inbox receiver works with every adapter and with inbox.work', () => {
    const inbox = createInbox({ database: pool });
    const receiver = createReceiver({ secrets: 'k', inbox });
    createNodeHandler(receiver);
    createFetchHandler(receiver);
    expectTypeOf(inbox.work(receiver)).toEqualTypeOf<Worker>();
    expectTypeOf(receiver.receive).returns.toEqualTypeOf<Promise<ReceiveResult>>();
    expectTypeOf(inbox.get('1')).toEqualTypeOf<Promise<StoredDeliveryDetail | undefined>>();
    expectTypeOf(inbox).toMatchTypeOf<Inbox<PoolClient>>();
  });

  it('refuses what is not a filter or an id', () => {
    const inbox = createInbox({ database: pool });
    // @ts-expect-error a state that does not exist
    void inbox.list({ state: 'finished' });
    // @ts-expect-error prune needs a date
    void inbox.prune({});
    // @ts-expect-error a receiver of another database's transaction type
    inbox.work(createReceiver({ secrets: 'k', inbox: createInbox({ database: sql }) }));
  });

  it('an inbox of your own implements DeliveryInbox: storeDelivery, countRefusal, and connectReceiver as it is', () => {
    interface QueueTx {
      enqueue(job: string): Promise<void>;
    }
    const rows = new Map<string, DeliveryToStore>();
    const refused = new Map<string, number>();
    const ownInbox: DeliveryInbox<QueueTx> = {
      async storeDelivery(delivery): Promise<StoredRow | undefined> {
        if (rows.has(delivery.bodyKey)) return undefined;
        rows.set(delivery.bodyKey, delivery);
        return { id: String(rows.size) };
      },
      countRefusal: (code) => void refused.set(code, (refused.get(code) ?? 0) + 1),
      connectReceiver,
    };
    createReceiver({ secrets: 'k', inbox: ownInbox }).on('app:budget:cap', (event, context) => {
      expectTypeOf(event).toEqualTypeOf<AppBudgetCapEvent>();
      expectTypeOf(context.transaction).toEqualTypeOf<QueueTx>();
    });
    expectTypeOf(createReceiver({ secrets: 'k', inbox: ownInbox }).reportRefusal)
      .parameter(0)
      .toEqualTypeOf<string | WebhookMountError>();
    // @ts-expect-error connectReceiver is part of the contract: without it, createReceiver could not store
    createReceiver({ secrets: 'k', inbox: { storeDelivery: async () => undefined } });
  });
});
