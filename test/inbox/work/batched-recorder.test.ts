import { describe, expect, it } from 'vitest';
import type { Driver, Row } from '../../../src/database/driver.js';
import { resolveTableNames } from '../../../src/inbox/schema/table-name.js';
import { resolveWorkOptions } from '../../../src/inbox/work/options.js';
import { batchedRecorder } from '../../../src/inbox/work/recorders.js';
import type { Claimed, Recorded } from '../../../src/inbox/work/run-attempt.js';
import { workerSql } from '../../../src/inbox/work/sql.js';
import { deferred, flush, ManualClock } from '../../kit/time.js';

/**
 * mode: 'batched''s recorder driven step by step: a database whose answers the test scripts, a
 * clock whose timers fire only when the test says. What the worker relies on: one completion
 * statement for the outcomes that end together, one at a time, sent again when it fails, a slot
 * held back while too many outcomes wait, and nothing recorded once stop() gave up.
 */

const names = resolveTableNames('batched_recorder_unit');
const sql = workerSql(names);

interface Sent {
  readonly text: string;
  readonly ids: string[];
  answer(recorded: string[] | Error): void;
}

function setUp(batchSize = 10) {
  const sent: Sent[] = [];
  const driver = {
    kind: 'pg',
    parallel: true,
    maxConnections: undefined,
    query(text: string, params?: readonly unknown[]): Promise<Row[]> {
      const answer = deferred<string[] | Error>();
      const input = JSON.parse(String(params![0])) as { id: string }[];
      sent.push({ text, ids: input.map((row) => row.id), answer: answer.resolve });
      return answer.promise.then((ids) => (ids instanceof Error ? Promise.reject(ids) : ids.map((id) => ({ id }))));
    },
  } as unknown as Driver;
  const options = resolveWorkOptions(driver, { mode: 'batched', concurrency: 2, batchSize, workerId: 'w1', listen: false });
  const clock = new ManualClock();
  const failures: string[] = [];
  const recorder = batchedRecorder({
    driver,
    sql,
    options,
    clock,
    health: { failed: (_error, doing) => void failures.push(doing), reachable: () => {} },
  });
  const handedOver: string[] = [];
  const succeed = (id: string): Promise<Recorded | { failures: readonly unknown[] }> =>
    recorder.succeed(
      claimed(id),
      async () => [],
      () => handedOver.push(id),
    );
  return { sent, recorder, clock, failures, handedOver, succeed };
}

const claimed = (id: string): Claimed => ({
  id,
  body: new Uint8Array(),
  attempt: 1,
  budgetUsed: 1,
  replayed: false,
  claimedAt: 0,
  action: undefined,
  app: undefined,
  traceContext: undefined,
  origin: 'received',
});

describe("mode: 'batched''s recorder", () => {
  it('records the outcomes that end in one turn with one statement, hands each slot over at once, and says which were recorded', async () => {
    const h = setUp();
    const one = h.succeed('1');
    const two = h.succeed('2');
    await flush(3);
    expect(h.handedOver).toEqual(['1', '2']);
    expect(h.sent.map((s) => [s.text === sql.complete, s.ids])).toEqual([[true, ['1', '2']]]);
    h.sent[0]!.answer(['1']); // 2's lease ran out: another worker has it
    expect([await one, await two]).toEqual(['recorded', 'lost']);
  });

  it('one statement at a time: outcomes that end while it runs go with the next', async () => {
    const h = setUp();
    const one = h.succeed('1');
    await flush(3);
    const two = h.succeed('2');
    const three = h.succeed('3');
    await flush(3);
    expect(h.sent.map((s) => s.ids)).toEqual([['1']]);
    h.sent[0]!.answer(['1']);
    await flush(3);
    expect(h.sent.map((s) => s.ids)).toEqual([['1'], ['2', '3']]);
    h.sent[1]!.answer(['2', '3']);
    expect([await one, await two, await three]).toEqual(['recorded', 'recorded', 'recorded']);
  });

  it('a statement the database refused is sent again after 100 ms, then 1 s, on the clock; then its outcomes are unrecorded', async () => {
    const h = setUp();
    const one = h.succeed('1');
    await flush(3);
    h.sent[0]!.answer(new Error('connection terminated'));
    await flush(3);
    expect(h.failures).toEqual(['recording finished attempts']);
    expect(h.clock.fire(100)).toBe(1);
    await flush(3);
    h.sent[1]!.answer(new Error('connection terminated'));
    await flush(3);
    expect(h.clock.fire(1000)).toBe(1);
    await flush(3);
    expect(h.sent.map((s) => s.ids)).toEqual([['1'], ['1'], ['1']]);
    h.sent[2]!.answer(new Error('connection terminated'));
    expect(await one).toBe('unrecorded');
    expect(h.clock.live).toEqual([]);
  });

  it('back-pressure: past batchSize outcomes waiting, a slot is handed over only when its own outcome is recorded', async () => {
    const h = setUp(2);
    const outcomes = ['1', '2', '3'].map((id) => h.succeed(id));
    await flush(3);
    expect(h.handedOver).toEqual(['1', '2']);
    h.sent[0]!.answer(['1', '2', '3']);
    expect(await Promise.all(outcomes)).toEqual(['recorded', 'recorded', 'recorded']);
    expect(h.handedOver).toEqual(['1', '2']); // 3's slot freed when its attempt ended
  });

  it('abandon(): the outcomes waiting go at once (not a turn later), none is recorded after, and one statement fails the running rows', async () => {
    const h = setUp();
    const one = h.succeed('1');
    for (let i = 0; i < 10; i++) await Promise.resolve(); // queued; its statement waits for the next turn
    expect(h.sent).toEqual([]);
    const abandoning = h.recorder.abandon([{ id: '7', attempts: 1, claimed_at: 0 }]);
    for (let i = 0; i < 10; i++) await Promise.resolve(); // within this turn
    expect(h.sent.map((s) => s.ids)).toEqual([['1']]);
    expect(await h.succeed('2')).toBe('unrecorded'); // ended after stop() gave up: left to the lease
    h.sent[0]!.answer(['1']);
    expect(await one).toBe('recorded');
    await flush(3);
    expect(h.sent.map((s) => [s.text === sql.abandon, s.ids])).toEqual([
      [false, ['1']],
      [true, ['7']],
    ]);
    h.sent[1]!.answer([]);
    await abandoning;
  });
});
