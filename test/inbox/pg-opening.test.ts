import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { beginWith, type PgPipelineClient, type PgQueryConfig } from '../../src/inbox/database/pg-opening.js';

/**
 * BEGIN and the default mode's done-mark leave in one write to the socket: pg writes a simple
 * query at once, so without the cork each transaction cost a third write, the system call that
 * profiles showed as most of a worker's time (bench/README.md). Checked on a client that records
 * what it is asked, and against pg's own shape: if pg moves its socket, this fails, rather than the
 * worker quietly losing its single write.
 */
function recordingClient(withStream: boolean) {
  const events: string[] = [];
  const client: PgPipelineClient = {
    pipeline: false,
    query(config: string | PgQueryConfig) {
      events.push(`query ${typeof config === 'string' ? config : config.name} (pipeline ${String(client.pipeline)})`);
      return Promise.resolve({ rows: typeof config === 'string' ? [] : [{ id: '1' }] });
    },
    ...(withStream ? { connection: { stream: { cork: () => events.push('cork'), uncork: () => events.push('uncork') } } } : {}),
  };
  return { client, events };
}

const mark = { text: 'SELECT $1::text AS id', params: ['1'] };
const named = (statement: { text: string; params: readonly unknown[] }): PgQueryConfig => ({
  name: 'mark',
  text: statement.text,
  values: statement.params,
});

describe('beginWith: BEGIN and the opening statement', () => {
  it('are queued while the socket is corked, in pipeline mode, and the client is left as it came', async () => {
    const { client, events } = recordingClient(true);
    expect(await beginWith(client, mark, named, true)).toEqual([{ id: '1' }]);
    expect(events).toEqual(['cork', 'query BEGIN (pipeline true)', 'query mark (pipeline true)', 'uncork']);
    expect(client.pipeline).toBe(false);
  });

  it('without a socket that corks (a wrapper), are still pipelined, written as the client writes them', async () => {
    const { client, events } = recordingClient(false);
    expect(await beginWith(client, mark, named, true)).toEqual([{ id: '1' }]);
    expect(events).toEqual(['query BEGIN (pipeline true)', 'query mark (pipeline true)']);
  });

  it('on a client others may queue on (not exclusive), BEGIN is answered before the statement goes, no cork', async () => {
    const { client, events } = recordingClient(true);
    await beginWith(client, mark, named, false);
    expect(events).toEqual(['query BEGIN (pipeline false)', 'query mark (pipeline false)']);
  });

  it("pg's client has the socket this corks", () => {
    const client = new pg.Client() as unknown as PgPipelineClient;
    expect(typeof client.connection?.stream?.cork).toBe('function');
    expect(typeof client.connection?.stream?.uncork).toBe('function');
    expect(client.pipeline).toBe(false);
  });
});
