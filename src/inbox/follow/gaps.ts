/**
 * Why following an inbox in id order needs more than `WHERE id > cursor`: ids are handed out when
 * a row is inserted, not when it commits. Two deliveries stored at once can commit out of order
 * (id 11 visible while id 10 is still in flight), and an insert that conflicts (a byte copy) or
 * rolls back leaves an id that never appears. A reader that moved its cursor past 10 would lose it.
 *
 * So every id skipped over is a gap, watched until it cannot appear any more: until the oldest
 * transaction still running (the snapshot's xmin) has passed every transaction that was running,
 * or yet to start, when the gap was first seen (that snapshot's xmax), and a little time has gone
 * by (an id is drawn a moment before its transaction gets an xid). A gap that fills is read with
 * the next batch, out of id order but never lost. For a short while (`holdMs`) the rows after a
 * fresh gap are held back, so deliveries committing a few milliseconds apart still go in id order.
 */

/** A snapshot's bounds, from `pg_current_snapshot()`: transactions below xmin are all finished. */
export interface SnapshotBounds {
  readonly xmin: bigint;
  readonly xmax: bigint;
}

export interface GapTiming {
  /** How long the rows after a gap that may still fill wait for it. */
  readonly holdMs: number;
  /** The least time a gap is watched, even once its transactions have all finished. */
  readonly minWatchMs: number;
  /** At most this many gaps are watched; past it the oldest are let go (an import that rolled back). */
  readonly maxGaps: number;
}

export const DEFAULT_GAP_TIMING: GapTiming = { holdMs: 300, minWatchMs: 1000, maxGaps: 10_000 };

interface Gap {
  readonly seenAt: number;
  /** The xmax of the snapshot that first missed it: once xmin reaches this, it cannot fill any more. */
  readonly need: bigint;
}

/** What a batch allows: the rows to hand on now, in order, and the cursor once they are. */
export interface Decision<R> {
  readonly rows: readonly R[];
  /** The highest id read in order; rows at or below it are done with, except the watched gaps. */
  readonly cursor: bigint;
  /** Rows were held back behind a gap: read again within this many milliseconds. */
  readonly holdingMs?: number;
}

export class GapWatch {
  readonly #timing: GapTiming;
  readonly #gaps = new Map<bigint, Gap>();

  constructor(timing: GapTiming = DEFAULT_GAP_TIMING) {
    this.#timing = timing;
  }

  /** The gaps below the cursor that may still fill: the next read asks for them too. */
  watchedBelow(cursor: bigint): bigint[] {
    return [...this.#gaps.keys()].filter((id) => id <= cursor).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /**
   * Takes one batch, read in id order with one snapshot: the rows above `cursor` and any watched
   * gap that filled. Returns what may be handed on now.
   */
  decide<R extends { readonly id: bigint }>(cursor: bigint, batch: readonly R[], snapshot: SnapshotBounds, now: number): Decision<R> {
    const out: R[] = [];
    for (const row of batch) {
      if (row.id <= cursor && this.#gaps.delete(row.id)) out.push(row); // a gap that filled: late, but not lost
    }
    for (const [id, gap] of this.#gaps) {
      if (id <= cursor && snapshot.xmin >= gap.need && now - gap.seenAt >= this.#timing.minWatchMs) this.#gaps.delete(id);
    }
    let next = cursor;
    let holdingMs: number | undefined;
    for (const row of batch) {
      if (row.id <= cursor) continue;
      // A jump of more ids than are watched (a sequence moved on by hand): the nearest ones only.
      const nearest = row.id - BigInt(this.#timing.maxGaps);
      for (let id = nearest > next + 1n ? nearest : next + 1n; id < row.id; id++) {
        if (!this.#gaps.has(id)) this.#gaps.set(id, { seenAt: now, need: snapshot.xmax });
      }
      holdingMs = this.#holdBefore(next, row.id, snapshot, now);
      if (holdingMs !== undefined) break;
      // Rows the filter leaves out move the cursor too: each id is read once.
      this.#gaps.delete(row.id);
      out.push(row);
      next = row.id;
    }
    this.#trim();
    return holdingMs === undefined ? { rows: out, cursor: next } : { rows: out, cursor: next, holdingMs };
  }

  /** How long to wait before `id`, for a fresh gap between `after` and it that may still fill. */
  #holdBefore(after: bigint, id: bigint, snapshot: SnapshotBounds, now: number): number | undefined {
    let wait: number | undefined;
    for (const [gapId, gap] of this.#gaps) {
      if (gapId <= after || gapId >= id || snapshot.xmin >= gap.need) continue;
      const left = gap.seenAt + this.#timing.holdMs - now;
      if (left > 0) wait = Math.max(wait ?? 0, left);
    }
    return wait;
  }

  #trim(): void {
    if (this.#gaps.size <= this.#timing.maxGaps) return;
    const ids = [...this.#gaps.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const id of ids.slice(0, ids.length - this.#timing.maxGaps)) this.#gaps.delete(id);
  }
}
