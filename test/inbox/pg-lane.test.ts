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
function recordingPool(answer: (query: string) => Promise<{ rows: Row[]; command?: string }> | undefined = () => undefined) {
  const events: string[] = [];
  const client: PgPoolClientLike = {
    pipeline: false,
    query(config: string | PgQueryConfig) {
      const name = typeof config === 'string' ? config : (config.name ?? config.text);
      events.push(client.pipeline ? `${name} (pipelined)` : name);
      return answer(name) ?? Promise.resolve({ rows: typeof config === 'string' ? [] : [{ id: '1' }], command: name });
    },
    connection: { stream: { cork: () => events.push('cork'), uncork: () => events.push('uncork') } },
    on: () => client,
    removeListener: () => client,
    release: (destroy) => events.push(`release${destroy === true ? ' (broken)' : ''}`),
  };
  const pool: PgPoolLike = {
    totalCount: 0,
    query: () => Promise.reject(new Error('not used')),
    connect(callback) {
      events.push('checkout');
      callback(undefined, client);
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
const turnOfLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('PgLane: a slot’s transactions on one connection', () => {
  it("writes each COMMIT with the next transaction's BEGIN and opening; a transaction settles only once its COMMIT answered", async () => {
    const { pool, events } = recordingPool();
    const onLane = lane(pool);
    const first = onLane.turn();
    const firstDone = first.transaction(async (_tx, opened) => opened, mark);
    await first.handedOver;
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
    expect(events.at(-1)).toBe('release (broken)');
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
    await first.handedOver;
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
