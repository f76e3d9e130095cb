import type { Row } from './driver.js';
import type { PgPipelineClient, PgQueryConfig } from './pg-opening.js';

/** The parts of node-postgres we use, typed structurally: `pg` is an optional peer. */
export interface PgClientLike extends PgPipelineClient {
  query(config: string | PgQueryConfig, params?: readonly unknown[]): Promise<{ rows: Row[] }>;
  on(event: 'notification', listener: (message: { channel: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
}
export interface PgPoolClientLike extends PgClientLike {
  release(destroy?: boolean | Error): void;
}
export interface PgPoolLike {
  /** pg's own: `max` bounds the pool (default 10); `connectionTimeoutMillis` bounds a connect (default 0: never). */
  readonly options?: { readonly max?: number; readonly connectionTimeoutMillis?: number };
  query(config: string | PgQueryConfig, params?: readonly unknown[]): Promise<{ rows: Row[] }>;
  connect(callback: (error: Error | undefined, client: PgPoolClientLike | undefined) => void): void;
  readonly totalCount: number;
}
export interface PgClientOnlyLike extends PgClientLike {
  connect(): Promise<void>;
}

/**
 * A COMMIT of a transaction in which a statement failed answers ROLLBACK, not an error: a handler
 * that caught its own query's error and returned would otherwise count as done while its writes,
 * and the done-mark, were rolled back.
 */
export function committedOrThrow(result: unknown): void {
  if ((result as { command?: unknown } | null)?.command === 'ROLLBACK')
    throw new Error(
      'the transaction was rolled back at COMMIT: a statement in it had failed (an error the handler caught and did not rethrow)',
    );
}

/** `work`, then a ROLLBACK when it throws; `onBroken` when even the ROLLBACK failed: that connection is broken. */
export async function rollingBack<R>(client: PgClientLike, onBroken: () => void, work: () => Promise<R>): Promise<R> {
  try {
    return await work();
  } catch (error) {
    await client.query('ROLLBACK').catch(onBroken);
    throw error;
  }
}

/** A checked-out client's errors surface through its next query; unheard, they would end the process. */
const ignoreClientError = (): void => {};

/**
 * A client from the pool with an 'error' listener on it from the first moment. Not `await
 * pool.connect()`: the pool stops listening for the client's errors as it hands the client over,
 * and the code after the await runs a turn later; a connection terminated in that gap (its FATAL
 * read along with the ReadyForQuery) emits an 'error' nobody hears, which ends the process. The
 * callback runs in the pool's own turn, so nothing is left unheard.
 */
export function checkOut(pool: PgPoolLike): Promise<PgPoolClientLike> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client) => {
      if (error || client === undefined) {
        reject(error ?? new Error('the pg pool handed over no client'));
        return;
      }
      client.on('error', ignoreClientError);
      resolve(client);
    });
  });
}

/** Back to the pool, or out of it when its connection is broken. */
export function checkIn(client: PgPoolClientLike, broken: boolean): void {
  client.removeListener('error', ignoreClientError);
  client.release(broken ? true : undefined);
}
