/**
 * What one delivery costs the process while `receive()` holds it, in bytes, estimated: its body,
 * once as received and once parsed (the event's strings and objects take about as much again),
 * and a fixed part for the request's own objects (the parsed headers, the delivery to store, its
 * keys, promises and timers). The fixed part is what bounds the number held: measured, a held
 * 0.4 KiB delivery cost about 4.5 KiB of heap, so counting body bytes only let a flood of small
 * deliveries hold ten times the cap.
 */
export const HELD_DELIVERY_OVERHEAD = 4096;

export function heldCost(body: Uint8Array | string): number {
  // A string is held as UTF-16: two bytes a code unit.
  const bytes = typeof body === 'string' ? body.length * 2 : body.byteLength;
  return HELD_DELIVERY_OVERHEAD + 2 * bytes;
}

/**
 * Everything the deliveries of every inbox hold at once, against `storeRetry.maxBufferedBytes`:
 * the cap protects the process, so it is one budget for all inboxes, not one each (two inboxes
 * each held their full cap before). A delivery is counted from its arrival until it is answered
 * and no attempt of it is under way any more (an attempt still running holds its body in the driver).
 */
export class HeldDeliveries {
  #bytes = 0;
  #count = 0;

  get bytes(): number {
    return this.#bytes;
  }

  get count(): number {
    return this.#count;
  }

  /** Counts `cost` unless it would take everything held past `cap`. */
  take(cost: number, cap: number): boolean {
    if (this.#bytes + cost > cap) return false;
    this.#bytes += cost;
    this.#count++;
    return true;
  }

  release(cost: number): void {
    this.#bytes -= cost;
    this.#count--;
  }
}

/**
 * The process's budget: one per loaded copy of this module, so every inbox created through one
 * copy of `rack-webhooks/inbox` shares it. A worker thread loads its own copy, and so does a
 * program that loads the package both as ESM and as CommonJS.
 */
export const processHeld = new HeldDeliveries();
