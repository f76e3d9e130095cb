import { Mutex, type Driver, type DriverTransaction, type Row } from './driver.js';

/** The parts of node-postgres we use, typed structurally: `pg` is an optional peer. */
interface PgResult {
  rows: Row[];
}
interface PgClientLike {
  query(text: string, params?: readonly unknown[]): Promise<PgResult>;
  on(event: 'notification', listener: (message: { channel: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
}
interface PgPoolClientLike extends PgClientLike {
  release(destroy?: boolean | Error): void;
}
export interface PgPoolLike {
  query(text: string, params?: readonly unknown[]): Promise<PgResult>;
  connect(): Promise<PgPoolClientLike>;
  readonly totalCount: number;
}
export interface PgClientOnlyLike extends PgClientLike {
  connect(): Promise<void>;
}

export function isPgPool(value: unknown): value is PgPoolLike {
  const candidate = value as Partial<PgPoolLike> | null;
  return typeof candidate?.query === 'function' && typeof candidate.connect === 'function' && typeof candidate.totalCount === 'number';
}

export function isPgClient(value: unknown): value is PgClientOnlyLike {
  const candidate = value as Partial<PgClientOnlyLike> & { escapeIdentifier?: unknown } | null;
  return typeof candidate?.query === 'function' && typeof candidate.connect === 'function' && typeof candidate.on === 'function' && typeof candidate.escapeIdentifier === 'function';
}

/** A broken connection must leave the pool instead of being handed to the next caller. */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code !== 'string' || code.startsWith('08') || code.startsWith('57') || !/^[0-9A-Z]{5}$/.test(code);
}

async function inTransaction<R>(client: PgClientLike, fn: (tx: DriverTransaction) => Promise<R>): Promise<R> {
  await client.query('BEGIN');
  const tx: DriverTransaction = { client, query: async (text, params) => (await client.query(text, params)).rows };
  let result: R;
  try {
    result = await fn(tx);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
  await client.query('COMMIT');
  return result;
}

export function pgPoolDriver(pool: PgPoolLike): Driver {
  return {
    kind: 'pg',
    parallel: true,
    async query(text, params) {
      return (await pool.query(text, params)).rows;
    },
    async script(text) {
      await pool.query(text);
    },
    async transaction(fn) {
      const client = await pool.connect();
      const onError = () => {}; // reported through the failing query; must not crash the process
      client.on('error', onError);
      let broken: unknown;
      try {
        return await inTransaction(client, fn);
      } catch (error) {
        if (isConnectionError(error)) broken = error;
        throw error;
      } finally {
        client.removeListener('error', onError);
        client.release(broken === undefined ? undefined : true);
      }
    },
    async listen(channel, onNotify, onError) {
      const client = await pool.connect();
      const onNotification = (message: { channel: string }) => {
        if (message.channel === channel) onNotify();
      };
      let released = false;
      const onClientError = (error: Error) => {
        if (released) return;
        released = true;
        client.release(true);
        onError(error);
      };
      client.on('notification', onNotification);
      client.on('error', onClientError);
      try {
        await client.query(`LISTEN ${quote(channel)}`);
      } catch (error) {
        if (!released) {
          released = true;
          client.release(true);
        }
        throw error;
      }
      return async () => {
        if (released) return;
        released = true;
        client.removeListener('notification', onNotification);
        await client.query(`UNLISTEN ${quote(channel)}`).catch(() => {});
        client.removeListener('error', onClientError);
        client.release();
      };
    },
  };
}

/** One `pg.Client`: one connection, so every call waits its turn. */
export function pgClientDriver(client: PgClientOnlyLike): Driver {
  const mutex = new Mutex();
  return {
    kind: 'pg',
    parallel: false,
    query: (text, params) => mutex.run(async () => (await client.query(text, params)).rows),
    script: (text) => mutex.run(async () => void (await client.query(text))),
    transaction: (fn) => mutex.run(() => inTransaction(client, fn)),
    async listen(channel, onNotify) {
      const onNotification = (message: { channel: string }) => {
        if (message.channel === channel) onNotify();
      };
      client.on('notification', onNotification);
      await mutex.run(() => client.query(`LISTEN ${quote(channel)}`));
      return async () => {
        client.removeListener('notification', onNotification);
        await mutex.run(() => client.query(`UNLISTEN ${quote(channel)}`)).catch(() => {});
      };
    },
  };
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
