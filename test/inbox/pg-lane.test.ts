import { describe, expect, it } from 'vitest';
import type { DriverTransaction, Row } from '../../src/database/driver.js';
import { PgLanes } from '../../src/database/pg-lane.js';
import type { PgPoolLike, PgPoolClientLike } from '../../src/database/pg-client.js';
import type { PgQueryConfig } from '../../src/database/pg-opening.js';

/**
 * A pg pool driver's chained transactions (pg-lane.ts): each transaction's COMMIT is held and
 * asked with the next transaction's BEGIN and opening, before any answer; sent alone a turn
 * later when none follows, and then the connection goes back. Checked on a pool whose clients
 * (made with pg's `pipeline: true`, or not) record what they are asked, in order: what a worker's
 * delivery costs in round trips, and what reaches the database when a COMMIT or a connection fails.
 */
function recordingPool(
  answer: (query: string, client: number) => Promise<{ rows: Row[]; command?: string }> | undefined = () => undefined,
  pipeline = true,
) {
  const events: string[] = [];
  let clients = 0;
  const newClient = (): PgPoolClientLike => {
    const n = ++clients;
    // The first client's events bare, a later one's marked: what went to which connection.
    const record = (event: string) => events.push(n === 1 ? event : `#${n} ${event}`);
    const client: PgPoolClientLike = {
      pipeline,
      query(config: string | PgQueryConfig) {
        const name = typeof config === 'string' ? config : (config.name ?? config.text);
        record(name);
        return answer(name, n) ?? Promise.resolve({ rows: typeof config === 'string' ? [] : [{ id: '1' }], command: name });
      },
      on: () => client,
      removeListener: () => client,
      release: (destroy) => record(`release${destroy === true ? ' (broken)' : ''}`),
    };
    return client;
  };
  const pool: PgPoolLike = {
    totalCount: 0,
    query: () => Promise.reject(new Error('not used')),
    connect(callback) {
      events.push('checkout');
      callback(undefined, newClient());
    },
  };
  const lanes = new PgLanes(pool, named, (text, params) => ({ text, values: params === undefined ? [] : [...params] }));
  /** One chained transaction: `done` settles once its COMMIT answered, `handedOver` once it waits for the next. */
  const chain = <R>(fn: (tx: DriverTransaction, opened: Row[]) => Promise<R>) => {
    let handOver!: () => void;
    const handedOver = new Promise<void>((resolve) => (handOver = resolve));
    const done = lanes.transaction(fn, mark, handOver);
    done.catch(() => {});
    return { done, handedOver };
  };
  return { events, chain };
}

const mark = { text: 'SELECT 1', params: [] };
const named = (statement: { text: string; params: readonly unknown[] }): PgQueryConfig => ({
  name: 'mark',
  text: statement.text,
  values: [...statement.params],
});
const turnOfLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('PgLanes: a worker’s transactions chained on one connection', () => {
  it("asks each COMMIT with the next transaction's BEGIN and opening; a transaction settles only once its COMMIT answered", async () => {
    const { events, chain } = recordingPool();
    const first = chain(async (_tx, opened) => opened);
    await first.handedOver;
    expect(events).toEqual(['checkout', 'BEGIN', 'mark']);
    const second = chain(async () => 'second');
    expect(await first.done).toEqual([{ id: '1' }]);
    expect(events.slice(3)).toEqual(['COMMIT', 'BEGIN', 'mark']);
    await second.handedOver;
    // One checkout for both; with nothing after it, the last COMMIT goes alone a turn later, then the connection goes back.
    expect(await second.done).toBe('second');
    expect(events.slice(6)).toEqual(['COMMIT', 'release']);
  });

  it('on a client that takes no exchange (pg-native, or a mark pg has yet to parse: pg-exchange.test.ts), COMMIT; BEGIN go as one query: two round trips', async () => {
    const { events, chain } = recordingPool(undefined, false);
    const first = chain(async () => 'first');
    await first.handedOver;
    const second = chain(async () => 'second');
    expect([await first.done, await second.done]).toEqual(['first', 'second']);
    expect(events).toEqual(['checkout', 'BEGIN', 'mark', 'COMMIT; BEGIN', 'mark', 'COMMIT', 'release']);
  });

  it('a COMMIT that fails rejects its own transaction only: no ROLLBACK is sent, the next one runs, and the connection leaves the pool', async () => {
    let commits = 0;
    const refused = new Error('deferred constraint refused at COMMIT');
    const { events, chain } = recordingPool((query) => (query === 'COMMIT' && ++commits === 1 ? Promise.reject(refused) : undefined));
    const first = chain(async () => 'first');
    await first.handedOver;
    const second = chain(async () => 'second');
    await expect(first.done).rejects.toBe(refused);
    expect(await second.done).toBe('second');
    expect(events).not.toContain('ROLLBACK');
    // The second transaction's COMMIT went on the same connection, which then left the pool.
    expect(events.slice(-2)).toEqual(['COMMIT', 'release (broken)']);
  });

  /** The transaction on connection 1 rolled back, the connection left the pool broken, and the next transaction ran on connection 2. */
  const ROLLED_BACK_THEN_A_NEW_CONNECTION = ['ROLLBACK', 'release (broken)', 'checkout', '#2 BEGIN', '#2 mark', '#2 COMMIT', '#2 release'];

  it('a connection that broke (its ROLLBACK failed) is given back broken, and the next transaction takes a new one', async () => {
    const lost = new Error('Connection terminated unexpectedly');
    const { events, chain } = recordingPool((query, client) => (client === 1 && query === 'ROLLBACK' ? Promise.reject(lost) : undefined));
    await expect(chain(async () => Promise.reject(lost)).done).rejects.toBe(lost);
    expect(await chain(async () => 'second').done).toBe('second');
    expect(events).toEqual(['checkout', 'BEGIN', 'mark', ...ROLLED_BACK_THEN_A_NEW_CONNECTION]);
  });

  it('an opening asked behind a COMMIT on a connection that then broke opens again on a new one: only the transaction before fails', async () => {
    const lost = new Error('Connection terminated unexpectedly');
    let commits = 0;
    const { events, chain } = recordingPool((query, client) => {
      if (client !== 1) return undefined;
      if (query === 'COMMIT') return ++commits === 1 ? Promise.reject(lost) : undefined;
      // The connection is gone once its first COMMIT failed: everything after it fails too.
      return commits > 0 ? Promise.reject(lost) : undefined;
    });
    const first = chain(async () => 'first');
    await first.handedOver;
    const second = chain(async (_tx, opened) => opened);
    await expect(first.done).rejects.toBe(lost);
    expect(await second.done).toEqual([{ id: '1' }]);
    expect(events.slice(3)).toEqual(['COMMIT', 'BEGIN', 'mark', ...ROLLED_BACK_THEN_A_NEW_CONNECTION]);
  });

  it('a COMMIT answered ROLLBACK (a statement in the transaction failed and the handler caught it) rejects, saying so', async () => {
    const { chain } = recordingPool((query) => (query === 'COMMIT' ? Promise.resolve({ rows: [], command: 'ROLLBACK' }) : undefined));
    await expect(chain(async () => 'done').done).rejects.toThrow('the transaction was rolled back at COMMIT: a statement in it had failed');
  });

  it('handlers that throw roll back at once and the connection goes back; the next transaction begins without a COMMIT before it', async () => {
    const { events, chain } = recordingPool();
    const failing = new Error('handler failed');
    await expect(chain(async () => Promise.reject(failing)).done).rejects.toBe(failing);
    expect(events).toEqual(['checkout', 'BEGIN', 'mark', 'ROLLBACK', 'release']);
    const second = chain(async () => 'second');
    await second.handedOver;
    expect(events.slice(5)).toEqual(['checkout', '#2 BEGIN', '#2 mark']);
    await turnOfLoop();
    expect(await second.done).toBe('second');
  });
});
