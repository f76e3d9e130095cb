import { describe, expect, it, vi } from 'vitest';
import { setUp } from '../../kit/setup.js';
import { driverFor } from '../../../src/database/detect.js';
import { resolveTableNames } from '../../../src/inbox/schema/table-name.js';
import { startWorker } from '../../../src/inbox/work/worker.js';
import { receiverRuntime } from '../../../src/inbox/store/connect-receiver.js';
import { pgPoolTo } from '../databases.js';
import { heldHandler, openInbox, type InboxHarness } from '../helpers.js';
import { deferred, ManualClock, within } from '../../kit/time.js';

/**
 * `worker.stop({ timeoutMs })` and `context.signal` on real databases, in both modes, and the
 * rows a stop leaves: what a caller relies on when it ends its pool right after `stop()`.
 */
setUp({ testTimeoutMs: 60_000 });

const rowsOf = (harness: InboxHarness) =>
  harness.db.query<Record<string, unknown>>(`SELECT id::text AS id, state, attempts, locked_by FROM ${harness.table} ORDER BY id`);
const attemptsOf = (harness: InboxHarness) =>
  harness.db.query<Record<string, unknown>>(
    `SELECT delivery_id::text AS id, attempt, outcome, error FROM ${harness.attemptsTable} ORDER BY delivery_id, attempt`,
  );

for (const kind of ['pg', 'pglite'] as const) {
  for (const mode of ['transactional', 'batched'] as const) {
    describe(`stop({ timeoutMs }) in mode '${mode}' (${kind})`, () => {
      it('waits for a handler that ends in time; its context.signal is never aborted', async () => {
        const harness = await openInbox(kind);
        const receiver = harness.receiver();
        const started = deferred<AbortSignal>();
        const finish = deferred<void>();
        receiver.on('app:budget:cap', async (_event, { signal }) => {
          started.resolve(signal);
          await finish.promise;
        });
        const [id] = await harness.deliverMany(receiver, 1);
        const worker = harness.work(receiver, { mode, concurrency: 1 });
        await expect(worker.stop({ timeoutMs: -5 })).rejects.toThrow(new RangeError('stop(): timeoutMs must be a number >= 0, got -5'));
        await expect(worker.stop({ timeoutMs: Number.NaN })).rejects.toThrow(RangeError);
        const signal = await started.promise; // a refused stop() stopped nothing
        let stopped = false;
        const stopping = worker.stop({ timeoutMs: 30_000 }).then(() => (stopped = true));
        await new Promise((resolve) => setImmediate(resolve));
        expect(stopped).toBe(false);
        finish.resolve();
        await stopping;
        expect(signal.aborted).toBe(false);
        expect(await rowsOf(harness)).toEqual([{ id, state: 'done', attempts: 1, locked_by: null }]);
      });

      it('past the timeout, aborts context.signal, fails what it can take in one statement, resolves, and records nothing after', async () => {
        const harness = await openInbox(kind);
        const receiver = harness.receiver();
        const started = deferred<AbortSignal>();
        const gaveUp = deferred<unknown>();
        const letGo = deferred<void>();
        receiver.on('app:budget:cap', async (_event, { signal }) => {
          started.resolve(signal);
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          gaveUp.resolve(signal.reason);
          await letGo.promise; // still running when stop() resolves
          throw signal.reason;
        });
        const [id] = await harness.deliverMany(receiver, 1);
        const worker = harness.work(receiver, { mode, concurrency: 1, leaseSeconds: 600 });
        const signal = await started.promise;
        await worker.stop({ timeoutMs: 20 });
        expect(signal.aborted).toBe(true);
        const reason = (await gaveUp.promise) as DOMException;
        expect([reason.name, reason.message]).toEqual([
          'AbortError',
          "the worker stopped: its handlers outlived stop()'s timeoutMs (20 ms)",
        ]);
        letGo.resolve();
        if (mode === 'batched') {
          // Abandoned in one statement before stop() resolved: due again, the attempt written as abandoned.
          expect(await rowsOf(harness)).toEqual([{ id, state: 'pending', attempts: 1, locked_by: null }]);
          expect(await attemptsOf(harness)).toEqual([
            { id, attempt: 1, outcome: 'abandoned', error: "the worker stopped: its handlers outlived stop()'s timeoutMs" },
          ]);
        } else {
          // The handler's own transaction holds the row: left to the lease. Once the handler gave up,
          // its transaction rolled back and nothing was recorded after stop() resolved.
          await vi.waitFor(() => harness.db.query(`SELECT id FROM ${harness.table} FOR UPDATE NOWAIT`), { timeout: 10_000 });
          expect(await rowsOf(harness)).toEqual([{ id, state: 'running', attempts: 1, locked_by: expect.any(String) }]);
          expect(await attemptsOf(harness)).toEqual([]);
        }
      });
    });
  }
}

describe('stop({ timeoutMs }) on PGlite, a handler that ignores context.signal (issue 38, point 4)', () => {
  it('resolves while the handler still runs: UNLISTEN, the heartbeat and the claims queued behind its transaction do not hold stop()', async () => {
    const harness = await openInbox('pglite');
    const { receiver, started, release } = heldHandler(harness);
    await harness.deliverMany(receiver, 1);
    const worker = harness.work(receiver, { concurrency: 1, leaseSeconds: 600 });
    await started;
    try {
      await within(worker.stop({ timeoutMs: 200 }), 20_000, 'stop({ timeoutMs: 200 }) with the handler still running');
    } finally {
      release(); // the handler ends; its transaction commits after stop() has returned
    }
  });
});

describe("mode: 'batched': stop() then pool.end() at once (pg)", () => {
  it('the rows given back for being held too long are back before stop() resolves: none ends as a crashed attempt', async () => {
    const harness = await openInbox('pg');
    const { receiver, started, release } = heldHandler(harness);
    const ids = await harness.deliverMany(receiver, 5);
    const pool = pgPoolTo();
    pool.on('error', () => {});
    const clock = new ManualClock();
    const options = { mode: 'batched' as const, concurrency: 1, batchSize: 5, listen: false, leaseSeconds: 30, workerId: 'w-stop' };
    const worker = startWorker(
      driverFor(pool),
      resolveTableNames(harness.table),
      receiverRuntime(receiver)!,
      options,
      () => async () => {},
      () => {},
      clock,
      false,
    );
    await started; // the first row runs, four are held
    clock.pass(15_001); // no renewal fired: the held rows have less than half their lease left
    expect(clock.fire(15_001)).toBe(1); // the stale timer gives them back
    const stopping = worker.stop();
    release();
    await stopping;
    await pool.end();
    const [first, ...rest] = await rowsOf(harness);
    expect(first).toEqual({ id: ids[0], state: 'done', attempts: 1, locked_by: null });
    expect(rest).toEqual(ids.slice(1).map((id) => ({ id, state: 'pending', attempts: 0, locked_by: null })));
    expect(await attemptsOf(harness)).toEqual([{ id: ids[0], attempt: 1, outcome: 'succeeded', error: null }]);
  });
});
