import { describe, expect, it } from 'vitest';
import type { Row } from '../../src/inbox/database/driver.js';
import { PgLane } from '../../src/inbox/database/pg-lane.js';
import type { PgPoolLike, PgPoolClientLike } from '../../src/inbox/database/pg-client.js';
import type { PgQueryConfig } from '../../src/inbox/database/pg-opening.js';

/**
 * A worker slot's lane (pg-lane.ts): each transaction's COMMIT is held and written with the next
 * transaction's BEGIN and opening, in one write; sent alone a turn later, or at close, when none
 * follows. Checked on a pool whose client records what it is asked, in order, with the socket's
 * cork: what a delivery's round trips are made of.
 */
function recordingPool(
  answer: (query: string, client: number) => Promise<{ rows: Row[]; command?: string }> | undefined = () => undefined,
) {
  const events: string[] = [];
  let clients = 0;
  const newClient = (): PgPoolClientLike => {
    const n = ++clients;
    // The first client's events bare, a second one's marked: what went to which connection.
    const record = (event: string) => events.push(n === 1 ? event : `#${n} ${event}`);
    const client: PgPoolClientLike = {
      pipeline: false,
      query(config: string | PgQueryConfig) {
        const name = typeof config === 'string' ? config : (config.name ?? config.text);
        record(client.pipeline ? `${name} (pipelined)` : name);
        return answer(name, n) ?? Promise.resolve({ rows: typeof config === 'string' ? [] : [{ id: '1' }], command: name });
      },
      connection: { stream: { cork: () => record('cork'), uncork: () => record('uncork') } },
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
  return { pool, events };
}

const mark = { text: 'SELECT 1', params: [] };
const named = (statement: { text: string; params: readonly unknown[] }): PgQueryConfig => ({
  name: 'mark',
  text: statement.text,
  values: [...statement.params],
});
const lane = (pool: PgPoolLike) => new PgLane(pool, named, (text, params) => ({ text, values: params === undefined ? [] : [...params] }));
/** The broken connection rolled back and given back broken; the transaction on a second one, committed at close. */
const ROLLED_BACK_THEN_A_NEW_CONNECTION = [
  'ROLLBACK',
  'release (broken)',
  'checkout',
  '#2 cork',
  '#2 BEGIN (pipelined)',
  '#2 mark (pipelined)',
  '#2 uncork',
  '#2 COMMIT',
  '#2 release',
];
const turnOfLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('PgLane: a slot’s transactions on one connection', () => {
  it("writes each COMMIT with the next transaction's BEGIN and opening; a transaction settles only once its COMMIT answered", async () => {
    const { pool, events } = recordingPool();
    const onLane = lane(pool);
    const first = onLane.turn();
    const firstDone = first.transaction(async (_tx, opened) => opened, mark);
    expect(await first.handedOver).toBe('committing');
    expect(events).toEqual(['checkout', 'cork', 'BEGIN (pipelined)', 'mark (pipelined)', 'uncork']);
    const second = onLane.turn();
    const secondDone = second.transaction(async () => 'second', mark);
    expect(await firstDone).toEqual([{ id: '1' }]);
    expect(events.slice(5)).toEqual(['cork', 'COMMIT (pipelined)', 'BEGIN (pipelined)', 'mark (pipelined)', 'uncork']);
    await second.handedOver;
    await onLane.close();
    expect(await secondDone).toBe('second');
    // One checkout for both; the last COMMIT alone at close, then the client goes back as it came.
    expect(events.slice(10)).toEqual(['COMMIT', 'release']);
  });

  it('with no transaction after it within a turn of the event loop, the held COMMIT goes alone', async () => {
    const { pool, events } = recordingPool();
    const onLane = lane(pool);
    const turn = onLane.turn();
    const done = turn.transaction(async () => 'done', mark);
    await turn.handedOver;
    expect(events).not.toContain('COMMIT');
    await turnOfLoop();
    expect(await done).toBe('done');
    expect(events.at(-1)).toBe('COMMIT');
    await onLane.close();
    expect(events.at(-1)).toBe('release');
    expect(events.filter((event) => event.startsWith('COMMIT'))).toHaveLength(1);
  });

  it('a COMMIT that fails rejects its own transaction only: no ROLLBACK is sent, the next one runs, and the connection leaves the pool', async () => {
    let commits = 0;
    const refused = new Error('deferred constraint refused at COMMIT');
    const { pool, events } = recordingPool((query) => (query === 'COMMIT' && ++commits === 1 ? Promise.reject(refused) : undefined));
    const onLane = lane(pool);
    const first = onLane.turn();
    const firstDone = first.transaction(async () => 'first', mark);
    await first.handedOver;
    const second = onLane.turn();
    const secondDone = second.transaction(async () => 'second', mark);
    await expect(firstDone).rejects.toBe(refused);
    await second.handedOver;
    await onLane.close();
    expect(await secondDone).toBe('second');
    expect(events).not.toContain('ROLLBACK');
    // The second transaction's COMMIT went on the same connection, which then left the pool.
    expect(events.slice(-3)).toEqual(['uncork', 'COMMIT', 'release (broken)']);
  });

  it('a connection that broke (its ROLLBACK failed) is given back broken, and the next transaction takes a new one', async () => {
    const lost = new Error('Connection terminated unexpectedly');
    const { pool, events } = recordingPool((query, client) => (client === 1 && query === 'ROLLBACK' ? Promise.reject(lost) : undefined));
    const onLane = lane(pool);
    const first = onLane.turn();
    await expect(first.transaction(async () => Promise.reject(lost), mark)).rejects.toBe(lost);
    expect(await first.handedOver).toBe('ended');
    const second = onLane.turn();
    const secondDone = second.transaction(async () => 'second', mark);
    await second.handedOver;
    await onLane.close();
    expect(await secondDone).toBe('second');
    expect(events).toEqual(['checkout', 'cork', 'BEGIN (pipelined)', 'mark (pipelined)', 'uncork', ...ROLLED_BACK_THEN_A_NEW_CONNECTION]);
  });

  it('an opening written behind a COMMIT on a connection that then broke opens again on a new one: only the transaction before fails', async () => {
    const lost = new Error('Connection terminated unexpectedly');
    let commits = 0;
    const { pool, events } = recordingPool((query, client) => {
      if (client !== 1) return undefined;
      if (query === 'COMMIT') return ++commits === 1 ? Promise.reject(lost) : undefined;
      // The connection is gone once its first COMMIT failed: everything after it fails too.
      return commits > 0 ? Promise.reject(lost) : undefined;
    });
    const onLane = lane(pool);
    const first = onLane.turn();
    const firstDone = first.transaction(async () => 'first', mark);
    await first.handedOver;
    const second = onLane.turn();
    const secondDone = second.transaction(async (_tx, opened) => opened, mark);
    await expect(firstDone).rejects.toBe(lost);
    expect(await second.handedOver).toBe('committing');
    await onLane.close();
    expect(await secondDone).toEqual([{ id: '1' }]);
    expect(events.slice(5)).toEqual([
      'cork',
      'COMMIT (pipelined)',
      'BEGIN (pipelined)',
      'mark (pipelined)',
      'uncork',
      ...ROLLED_BACK_THEN_A_NEW_CONNECTION,
    ]);
  });

  it('a COMMIT answered ROLLBACK (a statement in the transaction failed and the handler caught it) rejects, saying so', async () => {
    const { pool } = recordingPool((query) => (query === 'COMMIT' ? Promise.resolve({ rows: [], command: 'ROLLBACK' }) : undefined));
    const onLane = lane(pool);
    const turn = onLane.turn();
    const done = turn.transaction(async () => 'done', mark);
    await turn.handedOver;
    await onLane.close();
    await expect(done).rejects.toThrow('the transaction was rolled back at COMMIT: a statement in it had failed');
  });

  it('handlers that throw roll back at once; the next transaction then begins without a COMMIT before it', async () => {
    const { pool, events } = recordingPool();
    const onLane = lane(pool);
    const first = onLane.turn();
    const failing = new Error('handler failed');
    await expect(first.transaction(async () => Promise.reject(failing), mark)).rejects.toBe(failing);
    expect(await first.handedOver).toBe('ended');
    expect(events.at(-1)).toBe('ROLLBACK');
    const second = onLane.turn();
    const secondDone = second.transaction(async () => 'second', mark);
    await second.handedOver;
    expect(events.slice(-4)).toEqual(['cork', 'BEGIN (pipelined)', 'mark (pipelined)', 'uncork']);
    await onLane.close();
    expect(await secondDone).toBe('second');
    expect(events.at(-1)).toBe('release');
  });

  it('a turn skipped (its delivery needed no transaction) lets the next one begin; a lane never used checks nothing out', async () => {
    const { pool, events } = recordingPool();
    const unused = lane(pool);
    unused.turn().skip();
    await unused.close();
    expect(events).toEqual([]);
    const onLane = lane(pool);
    onLane.turn().skip();
    const turn = onLane.turn();
    const done = turn.transaction(async () => 'ran', mark);
    await turn.handedOver;
    await onLane.close();
    expect(await done).toBe('ran');
    expect(events).toEqual(['checkout', 'cork', 'BEGIN (pipelined)', 'mark (pipelined)', 'uncork', 'COMMIT', 'release']);
  });
});
