import type { DeliveryToStore, StoreDeliveryOptions, StoredRow } from '../../../receiver/inbox-contract.js';
import { describeThrown } from '../../../shared/thrown.js';
import type { Clock } from '../../clock.js';
import { WebhookInboxError } from '../../../database/errors.js';
import type { Circuit, Turn } from './circuit.js';
import { heldCost, processHeld, type HeldDeliveries } from './held.js';
import type { ResolvedStoreRetry } from './options.js';
import { NO_ANSWER, type Outage, type OutageLog } from './outage.js';
import { transientCause } from './transient.js';

type Store = (delivery: DeliveryToStore) => Promise<StoredRow | undefined>;

/** How one attempt ended; it never rejects, so that an attempt outliving its delivery is still heard. */
type Attempt = { stored: true; row: StoredRow | undefined } | { stored: false; error: unknown; cause: string | undefined };

/**
 * The store the receiver calls. Every delivery is held from its arrival within two bounds, whatever
 * the driver does: `maxWaitMs` and the process's byte cap (held.ts). It takes its turns in the
 * inbox's {@link Circuit}: at most as many attempts at once as the pool has connections, one probe
 * at a time while the database is down, and a delivery arriving during an outage waits its turn
 * without an attempt of its own. At its bound it is answered 503 even with an attempt under way:
 * that attempt goes on and, should it commit, its row stands and `inbox_stored_after_refusal` is
 * logged. A final refusal is thrown at once.
 *
 * A byte-identical copy of a delivery under way (a replay of one captured delivery, or the rack's
 * copies arriving together) takes no turn: it gets the first one's answer, `undefined` (a copy of
 * stored bytes) when that one is stored, the same error when it is refused. It costs its bytes all
 * the same, until it is answered: its request holds its own body and parsed event (charged nothing,
 * 200 replays of one 900 KiB delivery held 354 MiB against a 4 MiB cap, and 1,000 ended the
 * process). A copy past the cap is refused at once; nothing is lost, the first one holds its bytes.
 *
 * An attempt cut after the INSERT was sent may have committed without the answer arriving. The
 * INSERT is idempotent on its unique keys, so the next attempt conflicts and stores nothing; once
 * an attempt has failed, a conflict is resolved by looking the row up by its body key (the same
 * bytes): found, it is this delivery's row, stored, and answered as stored.
 */
export function storeWithRetry(
  store: Store,
  /** The row holding these exact bytes (its body key), if one is stored. */
  findStored: Store,
  retry: ResolvedStoreRetry,
  outage: Outage,
  circuit: Circuit,
  clock: Clock,
  held: HeldDeliveries = processHeld,
) {
  // `maxWaitMs: 0` (or `storeRetry: false`): one attempt, answered as the driver answers it.
  const retrying = retry.maxWaitMs > 0;
  const underWay = new Map<string, Promise<StoredRow | undefined>>();

  async function attempt(delivery: DeliveryToStore, failedBefore: boolean, turn: Turn, log: OutageLog | undefined): Promise<Attempt> {
    try {
      let row = await store(delivery);
      if (row === undefined && failedBefore) row = await findStored(delivery);
      circuit.reached();
      outage.succeeded(log);
      return { stored: true, row };
    } catch (error) {
      const cause = transientCause(error);
      // The database answered: a refusal for good, not an outage.
      if (cause === undefined) circuit.reached();
      else if (retrying) circuit.unreachable(cause);
      return { stored: false, error, cause };
    } finally {
      circuit.done(turn);
    }
  }

  async function hold(delivery: DeliveryToStore, log: OutageLog | undefined): Promise<StoredRow | undefined> {
    const arrival = clock.now();
    const cost = heldCost(delivery.body);
    if (!held.take(cost, retry.maxBufferedBytes)) {
      if (retrying) outage.refusedAtOnce(log);
      throw overCap(retry, held, outage.cause);
    }
    // Its bound, from its arrival: `passed` resolves then (never, without retrying); `over` is set as
    // it does, so that a delivery past its bound never takes another turn.
    let over = false;
    let clearDeadline = () => {};
    const passed = new Promise<'expired'>((resolve) => {
      if (!retrying) return;
      const expire = () => {
        over = true;
        resolve('expired');
      };
      clearDeadline = clock.after(Math.max(0, arrival + retry.maxWaitMs - clock.now()), expire, true);
    });
    let running = false;
    let answered = false;
    let waiting = false;
    let refused = true;
    let failedAttempts = 0;
    let lastError: unknown;
    const wait = (cause: string) => {
      if (waiting) return outage.failedAgain();
      outage.enter(cause, log);
      waiting = true;
    };
    const pastDeadline = (stillRunning: boolean) => {
      wait(NO_ANSWER);
      return pastBound(lastError, retry, failedAttempts, outage.cause, stillRunning);
    };
    try {
      if (retrying && circuit.down) wait(outage.cause ?? NO_ANSWER);
      for (;;) {
        if (over) throw pastDeadline(false);
        // Waiting its turn when an outage becomes known, it waits for the database too.
        const turn = await circuit.wait(passed, retrying ? wait : undefined);
        if (turn === 'expired') throw pastDeadline(false);
        running = true;
        const under = attempt(delivery, failedAttempts > 0, turn, log).finally(() => {
          running = false;
          // Answered already: the bytes it held in the driver are free only now.
          if (answered) held.release(cost);
        });
        const outcome = await Promise.race([under, passed]);
        if (outcome === 'expired') {
          void under.then((late) => reportLate(late, delivery, clock.now() - arrival, log));
          throw pastDeadline(true);
        }
        if (outcome.stored) {
          refused = false;
          return outcome.row;
        }
        if (outcome.cause === undefined || !retrying) throw outcome.error;
        failedAttempts++;
        lastError = outcome.error;
        wait(outcome.cause);
      }
    } finally {
      answered = true;
      clearDeadline();
      if (!running) held.release(cost);
      if (waiting) outage.leave(refused, log);
    }
  }

  function holdCopy(first: Promise<StoredRow | undefined>, delivery: DeliveryToStore): Promise<StoredRow | undefined> {
    const cost = heldCost(delivery.body);
    if (!held.take(cost, retry.maxBufferedBytes)) return Promise.reject(copyOverCap(retry, held));
    return first.then(() => undefined).finally(() => held.release(cost));
  }

  return (delivery: DeliveryToStore, options: StoreDeliveryOptions = {}): Promise<StoredRow | undefined> => {
    const key = delivery.bodyKey;
    const first = underWay.get(key);
    // A byte-identical copy: the first one's answer; its bytes, once stored, make this one a copy of stored bytes.
    if (first !== undefined) return holdCopy(first, delivery);
    const answer = hold(delivery, options.log);
    underWay.set(key, answer);
    const forget = () => {
      if (underWay.get(key) === answer) underWay.delete(key);
    };
    answer.then(forget, forget);
    return answer;
  };
}

/** An attempt that outlived its delivery's 503: a row it committed stands, and the log says so. */
function reportLate(late: Attempt, delivery: DeliveryToStore, durationMs: number, log: OutageLog | undefined): void {
  if (!late.stored || late.row === undefined) return;
  const tickId = (delivery.event.data as Record<string, unknown> | undefined)?.['tick_id'];
  log?.({
    level: 'warn',
    event: 'inbox_stored_after_refusal',
    message:
      'a delivery answered 503 at storeRetry.maxWaitMs was stored after all by the attempt still under way then: ' +
      'its row stands and workers will run it (the rack was told 503 and will not send it again)',
    deliveryId: late.row.id,
    ...(late.row.duplicateOf !== undefined ? { duplicateOf: late.row.duplicateOf } : {}),
    action: delivery.event.action,
    ...(typeof tickId === 'string' ? { tickId } : {}),
    durationMs,
  });
}

function overCap(retry: ResolvedStoreRetry, held: HeldDeliveries, cause: string | undefined): WebhookInboxError {
  return new WebhookInboxError(
    'inbox_unavailable',
    `The deliveries this process holds for the inbox database (${held.count}, about ${held.bytes} bytes) leave no room for this one ` +
      `(storeRetry.maxBufferedBytes ${retry.maxBufferedBytes}): refused at once. ` +
      (cause === undefined ? 'They are waiting for the database to answer.' : `An outage is under way (${cause}).`),
  );
}

function copyOverCap(retry: ResolvedStoreRetry, held: HeldDeliveries): WebhookInboxError {
  return new WebhookInboxError(
    'inbox_unavailable',
    `A byte-identical copy of a delivery this process holds for the inbox database, and the deliveries held ` +
      `(${held.count}, about ${held.bytes} bytes) leave no room for it (storeRetry.maxBufferedBytes ${retry.maxBufferedBytes}): ` +
      'refused at once. Nothing is lost by it: the delivery it copies is held with the same bytes.',
  );
}

function pastBound(
  error: unknown,
  retry: ResolvedStoreRetry,
  attempts: number,
  cause: string | undefined,
  stillRunning: boolean,
): WebhookInboxError {
  const why = stillRunning
    ? 'its attempt got no answer in time; it goes on, and should it commit, the row stands (logged as inbox_stored_after_refusal)'
    : error === undefined
      ? `it waited its turn behind an outage (${cause ?? NO_ANSWER}) whose attempts got no answer or kept failing`
      : describeThrown(error);
  return new WebhookInboxError(
    'inbox_unavailable',
    `The inbox database could not be reached within storeRetry.maxWaitMs (${retry.maxWaitMs} ms from its arrival, ${attempts} failed attempts of this delivery): ${why}`,
    { cause: error instanceof WebhookInboxError ? error.cause : error },
  );
}
