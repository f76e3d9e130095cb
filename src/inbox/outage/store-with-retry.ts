import type { DeliveryToStore, StoreDeliveryOptions, StoredRow } from '../../receiver/inbox-contract.js';
import { describeThrown } from '../../shared/thrown.js';
import { WebhookInboxError } from '../errors.js';
import type { Circuit, Turn } from './circuit.js';
import type { ResolvedStoreRetry } from './options.js';
import type { Outage } from './outage.js';
import { transientCause } from './transient.js';

type Store = (delivery: DeliveryToStore) => Promise<StoredRow | undefined>;
/** The id of the row holding these exact bytes (its replay key), if one is stored. */
type FindStored = (delivery: DeliveryToStore) => Promise<StoredRow | undefined>;

function bodyBytes(body: Uint8Array | string): number {
  // A string is held as UTF-16: two bytes a code unit.
  return typeof body === 'string' ? body.length * 2 : body.byteLength;
}

/**
 * The store the receiver calls: while the database is away for a reason that can pass, the
 * delivery waits within the request, up to `maxWaitMs` and within the byte cap shared by all
 * waiting deliveries, in the inbox's {@link Circuit}: one probe at a time while the database is
 * down, all of them (as many at once as the pool holds) as soon as an attempt reaches it. A
 * delivery that arrives during an outage waits its turn without an attempt of its own. A final
 * refusal is thrown at once.
 *
 * An attempt cut after the INSERT was sent may have committed without the answer arriving. The
 * INSERT is idempotent on its unique keys, so the next attempt conflicts and stores nothing; once
 * an attempt has failed, a conflict is resolved by looking the row up by its body key (the same
 * bytes): found, it is this delivery's row, stored, and answered as stored.
 */
export function storeWithRetry(store: Store, findStored: FindStored, retry: ResolvedStoreRetry, outage: Outage, circuit: Circuit) {
  return async (delivery: DeliveryToStore, options: StoreDeliveryOptions = {}): Promise<StoredRow | undefined> => {
    const { log } = options;
    const bytes = bodyBytes(delivery.body);
    let failedAttempts = 0;
    let lastError: unknown;
    let deadline = 0;
    let waiting = false;
    let refused = true;
    const startWaiting = (cause: string, error: unknown) => {
      if (!outage.enter(bytes, cause, log)) throw overCap(error, retry, outage);
      waiting = true;
      deadline = Date.now() + retry.maxWaitMs;
    };
    try {
      if (retry.maxWaitMs > 0 && circuit.down) startWaiting(outage.cause ?? 'outage', undefined);
      for (;;) {
        let turn: Turn | undefined;
        if (waiting) {
          turn = await circuit.wait(deadline);
          if (turn === 'expired') throw pastBound(lastError, retry, failedAttempts, outage.cause);
        }
        try {
          let id = await store(delivery);
          if (id === undefined && failedAttempts > 0) id = await findStored(delivery);
          circuit.reached();
          refused = false;
          outage.succeeded(log);
          return id;
        } catch (error) {
          const cause = transientCause(error);
          if (cause === undefined) {
            // The database answered: a refusal for good, not an outage.
            circuit.reached();
            throw error;
          }
          circuit.unreachable();
          if (retry.maxWaitMs === 0) throw error;
          failedAttempts++;
          lastError = error;
          if (!waiting) startWaiting(cause, error);
          else outage.failedAgain();
          if (deadline - Date.now() <= 0) throw pastBound(error, retry, failedAttempts, cause);
        } finally {
          if (turn !== undefined) circuit.done(turn);
        }
      }
    } finally {
      if (waiting) outage.leave(bytes, refused, log);
    }
  };
}

function causeOf(error: unknown): unknown {
  return error instanceof WebhookInboxError ? error.cause : error;
}

function overCap(error: unknown, retry: ResolvedStoreRetry, outage: Outage): WebhookInboxError {
  return new WebhookInboxError(
    'inbox_unavailable',
    `The inbox database could not be reached and deliveries waiting for it already hold ${outage.bufferedBytes} bytes ` +
      `(storeRetry.maxBufferedBytes ${retry.maxBufferedBytes}): refused at once. ` +
      (error === undefined ? `An outage is under way (${outage.cause ?? 'unknown cause'}).` : describeThrown(error)),
    { cause: causeOf(error) },
  );
}

function pastBound(error: unknown, retry: ResolvedStoreRetry, attempts: number, cause: string | undefined): WebhookInboxError {
  return new WebhookInboxError(
    'inbox_unavailable',
    `The inbox database could not be reached within storeRetry.maxWaitMs (${retry.maxWaitMs} ms, ${attempts} attempts of this delivery): ` +
      (error === undefined ? `it waited behind an outage (${cause ?? 'unknown cause'}) whose probes kept failing` : describeThrown(error)),
    { cause: causeOf(error) },
  );
}
