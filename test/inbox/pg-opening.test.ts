import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { beginWith, type PgPipelineClient, type PgQueryConfig } from '../../src/database/pg-opening.js';

/**
 * A worker's transaction opens with its done-mark, and a held COMMIT of the transaction before
 * goes ahead of them (pg-lane.ts), through pg's public API only: its `pipeline` option, read as the
 * client was made, never switched nor its socket touched. Checked on a client that records what
 * it is asked and when its answers come: pipelined, all three go before any answer (one round
 * trip); on a client that takes no exchange `COMMIT; BEGIN` as one query, then the mark (two). A
 * real client's one exchange (one round trip) is checked in pg-exchange.test.ts.
 */
function recordingClient(pipeline: boolean, failing = '') {
  const events: string[] = [];
  const answers: (() => void)[] = [];
  const client: PgPipelineClient = {
    pipeline,
    query(config: string | PgQueryConfig) {
      const name = typeof config === 'string' ? config : config.name!;
      events.push(`query ${name}`);
      return new Promise((resolve, reject) =>
        answers.push(() => {
          events.push(`answer ${name}`);
          if (name === failing) reject(new Error(`${name} failed`));
          else resolve({ rows: typeof config === 'string' ? [] : [{ id: '1' }] });
        }),
      );
    },
  };
  /** Answers every query asked so far, in order, and lets their callers go on. */
  const answerAll = async () => {
    for (let round = 0; round < 5; round++) {
      for (const answer of answers.splice(0)) answer();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  };
  return { client, events, answerAll };
}

const mark = { text: 'SELECT $1::text AS id', params: ['1'] };
const named = (statement: { text: string; params: readonly unknown[] }): PgQueryConfig => ({
  name: 'mark',
  text: statement.text,
  values: statement.params,
});

describe('beginWith: a held COMMIT, BEGIN and the opening statement', () => {
  it('on a client made with pipeline: true, all three are asked before any answer (one round trip)', async () => {
    const { client, events, answerAll } = recordingClient(true);
    const committed: Promise<unknown>[] = [];
    const opened = beginWith(client, mark, named, (commit) => committed.push(commit));
    expect(events).toEqual(['query COMMIT', 'query BEGIN', 'query mark']);
    await answerAll();
    expect(await opened).toEqual([{ id: '1' }]);
    expect(committed).toHaveLength(1);
    expect(client.pipeline).toBe(true);
  });

  it('on a client that takes no exchange (pg-native, or a mark pg has yet to parse), COMMIT; BEGIN go as one query, then the mark once it answered (two round trips)', async () => {
    const { client, events, answerAll } = recordingClient(false);
    const opened = beginWith(client, mark, named, () => {});
    expect(events).toEqual(['query COMMIT; BEGIN']);
    await answerAll();
    expect(await opened).toEqual([{ id: '1' }]);
    expect(events).toEqual(['query COMMIT; BEGIN', 'answer COMMIT; BEGIN', 'query mark', 'answer mark']);
    expect(client.pipeline).toBe(false);
  });

  it('a held COMMIT that fails (it skipped the BEGIN after it) fails the transaction before; BEGIN then goes alone', async () => {
    const { client, events, answerAll } = recordingClient(false, 'COMMIT; BEGIN');
    let commitFailed: unknown;
    const opened = beginWith(client, mark, named, (commit) => void commit.catch((error: unknown) => (commitFailed = error)));
    await answerAll();
    expect(await opened).toEqual([{ id: '1' }]);
    expect((commitFailed as Error).message).toBe('COMMIT; BEGIN failed');
    expect(events.filter((event) => event.startsWith('query'))).toEqual(['query COMMIT; BEGIN', 'query BEGIN', 'query mark']);
  });

  it("pg's pipeline mode is the client's public option, as the client was made", () => {
    expect((new pg.Client({ pipeline: true } as pg.ClientConfig) as unknown as PgPipelineClient).pipeline).toBe(true);
    expect((new pg.Client() as unknown as PgPipelineClient).pipeline).toBe(false);
  });
});
