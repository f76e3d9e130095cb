/**
 * GapWatch against a model of concurrent stores: ids and xids drawn in the same order as the
 * transactions start, each committing or rolling back at its own moment, the reader taking a
 * snapshot at each step. Whatever the interleaving, every committed id is handed on exactly once;
 * when the commits come in id order, so do the ids handed on.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GapWatch, type SnapshotBounds } from '../../../src/inbox/follow/gaps.js';

interface Store {
  /** The step its transaction starts (draws its id and xid). */
  readonly start: number;
  /** Steps later, it ends. */
  readonly length: number;
  readonly commits: boolean;
}

const STEP_MS = 50;

/** Runs the reader over the stores; returns the ids handed on, in order. */
function follow(stores: readonly Store[], batchSize: number): { handed: bigint[]; committed: bigint[] } {
  // Ids (and xids, which the same insert takes) go in start order.
  const ordered = [...stores].sort((a, b) => a.start - b.start);
  const txns = ordered.map((store, index) => ({
    id: BigInt(index + 1),
    start: store.start,
    end: store.start + store.length,
    commits: store.commits,
  }));
  const watch = new GapWatch({ holdMs: 100, minWatchMs: 200, maxGaps: 10_000 });
  const handed: bigint[] = [];
  let cursor = 0n;
  const lastEnd = Math.max(0, ...txns.map((txn) => txn.end));
  // Past the last end the steps go on, the clock moving a second each, until nothing is watched.
  for (let step = 0; step <= lastEnd + 20; step++) {
    const now = step <= lastEnd ? step * STEP_MS : lastEnd * STEP_MS + (step - lastEnd) * 1000;
    const started = txns.filter((txn) => txn.start <= step);
    const running = started.filter((txn) => txn.end > step);
    const xmax = BigInt(started.length + 1);
    const snapshot: SnapshotBounds = { xmin: running.length === 0 ? xmax : running[0]!.id, xmax };
    const visible = txns.filter((txn) => txn.commits && txn.end <= step);
    const late = new Set(watch.watchedBelow(cursor));
    const batch = [...visible.filter((txn) => late.has(txn.id)), ...visible.filter((txn) => txn.id > cursor).slice(0, batchSize)].sort(
      (a, b) => (a.id < b.id ? -1 : 1),
    );
    const decision = watch.decide(cursor, batch, snapshot, now);
    handed.push(...decision.rows.map((row) => row.id));
    cursor = decision.cursor;
  }
  return { handed, committed: txns.filter((txn) => txn.commits).map((txn) => txn.id) };
}

const stores = fc.array(
  fc.record({ start: fc.integer({ min: 0, max: 30 }), length: fc.integer({ min: 0, max: 12 }), commits: fc.boolean() }),
  { maxLength: 40 },
);

describe('GapWatch', () => {
  it('hands on every committed id exactly once, whatever order the commits come in', () => {
    fc.assert(
      fc.property(stores, fc.integer({ min: 1, max: 5 }), (list, batchSize) => {
        const { handed, committed } = follow(list, batchSize);
        expect([...handed].sort((a, b) => (a < b ? -1 : 1))).toEqual(committed);
      }),
      { numRuns: 300 },
    );
  });

  it('hands them on in id order when they commit in id order', () => {
    fc.assert(
      fc.property(stores, fc.integer({ min: 1, max: 5 }), (list, batchSize) => {
        // Each transaction ends no earlier than the one started before it.
        const ordered = [...list].sort((a, b) => a.start - b.start);
        let lastEnd = 0;
        const inOrder = ordered.map((store) => {
          const end = Math.max(store.start + store.length, lastEnd);
          lastEnd = end;
          return { ...store, length: end - store.start };
        });
        const { handed, committed } = follow(inOrder, batchSize);
        expect(handed).toEqual(committed);
      }),
      { numRuns: 300 },
    );
  });

  it('holds the rows after a fresh gap for holdMs while its transaction runs, then goes on and still takes it late', () => {
    const watch = new GapWatch({ holdMs: 300, minWatchMs: 1000, maxGaps: 10 });
    const running: SnapshotBounds = { xmin: 1n, xmax: 3n }; // id 1 in flight, id 2 committed
    expect(watch.decide(0n, [{ id: 2n }], running, 0)).toEqual({ rows: [], cursor: 0n, holdingMs: 300 });
    expect(watch.decide(0n, [{ id: 2n }], running, 100)).toEqual({ rows: [], cursor: 0n, holdingMs: 200 });
    expect(watch.decide(0n, [{ id: 2n }], running, 300)).toEqual({ rows: [{ id: 2n }], cursor: 2n });
    expect(watch.watchedBelow(2n)).toEqual([1n]);
    // It commits: read late, once.
    expect(watch.decide(2n, [{ id: 1n }], { xmin: 3n, xmax: 3n }, 400)).toEqual({ rows: [{ id: 1n }], cursor: 2n });
    expect(watch.watchedBelow(2n)).toEqual([]);
  });

  it('lets a gap go once every transaction that could fill it has ended and minWatchMs has passed', () => {
    const watch = new GapWatch({ holdMs: 300, minWatchMs: 1000, maxGaps: 10 });
    // A conflict used id 1 and ended: nothing runs, nothing holds.
    expect(watch.decide(0n, [{ id: 2n }], { xmin: 5n, xmax: 5n }, 0)).toEqual({ rows: [{ id: 2n }], cursor: 2n });
    expect(watch.watchedBelow(2n)).toEqual([1n]);
    watch.decide(2n, [], { xmin: 5n, xmax: 5n }, 999);
    expect(watch.watchedBelow(2n)).toEqual([1n]);
    watch.decide(2n, [], { xmin: 5n, xmax: 5n }, 1000);
    expect(watch.watchedBelow(2n)).toEqual([]);
  });

  it('watches at most maxGaps, letting the oldest go', () => {
    const watch = new GapWatch({ holdMs: 0, minWatchMs: 1000, maxGaps: 3 });
    watch.decide(0n, [{ id: 10n }], { xmin: 1n, xmax: 20n }, 0);
    expect(watch.watchedBelow(10n)).toEqual([7n, 8n, 9n]);
  });
});
