/**
 * A rack (the emulator, its webhooks and its read API) delivering to a real receiver whose inbox
 * is a table on the test PostgreSQL: what a reconcile test drops on the way is what it must find.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler } from '../../src/adapters/node.js';
import { createInbox } from '../../src/inbox/create-inbox.js';
import { createRackClient } from '../../src/rack-api/client.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { createRackEmulator } from '../../src/testing/emulator.js';
import type { RackEmulator } from '../../src/testing/types.js';
import type { TestDatabase } from '../inbox/databases.js';
import { inProcessFetch } from '../kit/rack-api.js';

export const KEY = 'reconcile-test-key';
export const HOUR = 3_600_000;

export interface Scenario {
  readonly rack: RackEmulator;
  readonly inbox: ReturnType<typeof createInbox>;
  readonly table: string;
  /** The receiver the rack delivers to: a test registers handlers on it and runs `inbox.work(receiver)`. */
  readonly receiver: ReturnType<typeof createReceiver>;
  /** A client reading the emulator's routes in process, with a fresh read token. */
  client(): ReturnType<typeof createRackClient>;
  close(): Promise<void>;
}

let tables = 0;

export async function startScenario(db: TestDatabase): Promise<Scenario> {
  const table = `${db.schema}.reconcile${++tables}`;
  const inbox = createInbox({ database: db.database as never, table, notify: false }) as ReturnType<typeof createInbox>;
  await inbox.migrate();
  const receiver = createReceiver({ secrets: KEY, inbox });
  const handle = createNodeHandler(receiver);
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  const rack = createRackEmulator({ webhooks: { inbox: url }, signingKeys: KEY, log: () => {} });
  // Every delivery the rack does not drop must be stored: a failed one would look like a gap.
  const send = rack.dispatch.bind(rack);
  (rack as { dispatch: typeof send }).dispatch = async (event, options) => {
    const results = await send(event, options);
    for (const result of results)
      if (result.status !== 200 && result.status !== 202) throw new Error(`delivery failed: ${JSON.stringify(result)}`);
    return results;
  };
  return {
    rack,
    inbox,
    table,
    receiver,
    client: () => createRackClient({ url: 'https://api.rack.example', token: rack.api.mintToken(), fetch: inProcessFetch(rack.api) }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `Date.now()` minus `ms`, to the millisecond. */
export const ago = (ms: number) => new Date(Date.now() - ms);
