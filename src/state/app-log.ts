import { compareEvents } from '../events/compare.js';
import type { AnyWebhookEvent } from '../events/types.js';
import { initialFold, step, type Folded } from './fold.js';

/** Folded state after each event, so a late event re-folds only what it precedes. */
interface Entry {
  readonly event: AnyWebhookEvent;
  readonly nanos: bigint;
  folded: Folded;
}

export type Placement = { kind: 'inserted'; late: boolean } | { kind: 'duplicate' } | { kind: 'outside_window' };

// Compaction folds the part of the log that left the window into the base, in chunks, so each
// event pays O(1) for it on average.
const MIN_COMPACTION = 64;

/**
 * One app's events within the window, sorted as `compareEvents` sorts (timestamp to the
 * nanosecond, then a fixed tie rule), each with the state folded up to it.
 */
export class AppLog {
  readonly #entries: Entry[] = [];
  #base: Folded;
  /** The newest event folded into the base: anything sorting before it is outside the window. */
  #compactedUpTo: Entry | undefined;
  /** The newest timestamp applied to this app: its window and grace periods are measured from it. */
  #newest: bigint | undefined;

  get newest(): bigint | undefined {
    return this.#newest;
  }

  constructor(app: string) {
    this.#base = initialFold(app);
  }

  get current(): Folded {
    return this.#entries[this.#entries.length - 1]?.folded ?? this.#base;
  }

  insert(event: AnyWebhookEvent, nanos: bigint): Placement {
    if (this.#compactedUpTo !== undefined && compare(event, nanos, this.#compactedUpTo) <= 0) return { kind: 'outside_window' };
    const entries = this.#entries;
    if (this.#newest === undefined || nanos > this.#newest) this.#newest = nanos;
    const last = entries[entries.length - 1];
    // The common case: in order, one step.
    if (last === undefined || compare(event, nanos, last) > 0) {
      entries.push({ event, nanos, folded: step(last?.folded ?? this.#base, event) });
      return { kind: 'inserted', late: false };
    }
    let low = 0;
    let high = entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compare(event, nanos, entries[middle]!) > 0) low = middle + 1;
      else high = middle;
    }
    if (compare(event, nanos, entries[low]!) === 0) return { kind: 'duplicate' };
    entries.splice(low, 0, { event, nanos, folded: this.#base });
    this.#refold(low);
    return { kind: 'inserted', late: true };
  }

  /**
   * Folds what left the window (`windowStart` in event-time nanoseconds) into the base. The state
   * is unchanged by it (the fold bounds what it keeps itself), so nothing is re-folded.
   */
  compact(windowStart: bigint): void {
    const entries = this.#entries;
    if (entries.length === 0 || entries[0]!.nanos >= windowStart) return;
    let count = 0;
    while (count < entries.length - 1 && entries[count]!.nanos < windowStart) count++;
    if (count < Math.max(MIN_COMPACTION, entries.length >> 2)) return;
    this.#compactedUpTo = entries[count - 1]!;
    this.#base = entries[count - 1]!.folded;
    entries.splice(0, count);
  }

  #refold(from: number): void {
    const entries = this.#entries;
    let folded = from === 0 ? this.#base : entries[from - 1]!.folded;
    for (let index = from; index < entries.length; index++) {
      folded = step(folded, entries[index]!.event);
      entries[index]!.folded = folded;
    }
  }
}

/** Timestamps compared as precomputed nanoseconds; the full comparator only on a tie. */
function compare(event: AnyWebhookEvent, nanos: bigint, entry: Entry): number {
  if (nanos !== entry.nanos) return nanos < entry.nanos ? -1 : 1;
  return compareEvents(event, entry.event);
}
