import type { DeliveryToStore, StoreDeliveryOptions, StoredRow } from '../../receiver/inbox-contract.js';
import { describeThrown } from '../../shared/thrown.js';
import { WebhookInboxError } from '../errors.js';
import type { ResolvedStoreRetry } from './options.js';
import { Outage } from './outage.js';
import { transientCause } from './transient.js';

type Store = (delivery: DeliveryToStore) => Promise<StoredRow | undefined>;
/** The id of the row holding these exact bytes (its replay key), if one is stored. */
type FindStored = (delivery: DeliveryToStore) => Promise<StoredRow | undefined>;

/** Waits between attempts: 50 ms doubling to 1 s, each between half and all of its step. */
const FIRST_STEP_MS = 50;
const LONGEST_STEP_MS = 1000;

export function retryDelayMs(failedAttempts: number, random: () => number = Math.random): number {
  const step = Math.min(LONGEST_STEP_MS, FIRST_STEP_MS * 2 ** Math.min(10, failedAttempts - 1));
  return Math.round(step * (0.5 + 0.5 * random()));
}

function bodyBytes(body: Uint8Array | string): number {
  // A string is held as UTF-16: two bytes a code unit.
  return typeof body === 'string' ? body.length * 2 : body.byteLength;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The store the receiver calls: while the database is away for a reason that can pass, the
 * delivery waits within the request (backoff with jitter) up to `maxWaitMs` and within the byte
 * cap shared by all waiting deliveries; a final refusal is thrown at once.
 *
 * An attempt cut after the INSERT was sent may have committed without the answer arriving. The
 * INSERT is idempotent on its unique keys, so the next attempt conflicts and stores nothing; once
 * an attempt has failed, a conflict is resolved by looking the row up by its body key (the same
 * bytes): found, it is this delivery's row, stored, and answered as stored.
 */
export function storeWithRetry(store: Store, findStored: FindStored, retry: ResolvedStoreRetry, outage: Outage) {
  return async (delivery: DeliveryToStore, options: StoreDeliveryOptions = {}): Promise<StoredRow | undefined> => {
    const { log } = options;
    const bytes = bodyBytes(delivery.body);
    let failedAttempts = 0;
    let deadline = 0;
    let waiting = false;
    let refused = true;
    try {
      for (;;) {
        try {
          let id = await store(delivery);
          if (id === undefined && failedAttempts > 0) id = await findStored(delivery);
          refused = false;
          outage.succeeded(log);
          return id;
        } catch (error) {
          const cause = transientCause(error);
          if (cause === undefined || retry.maxWaitMs === 0) throw error;
          failedAttempts++;
          if (!waiting) {
            if (!outage.enter(bytes, cause, log)) throw overCap(error, retry, outage);
            waiting = true;
            deadline = Date.now() + retry.maxWaitMs;
          } else {
            outage.failedAgain();
          }
          const left = deadline - Date.now();
          if (left <= 0) throw pastBound(error, retry, failedAttempts);
          await sleep(Math.min(left, retryDelayMs(failedAttempts)));
        }
      }
    } finally {
      if (waiting) outage.leave(bytes, refused, log);
    }
  };
}

function overCap(error: unknown, retry: ResolvedStoreRetry, outage: Outage): WebhookInboxError {
  return new WebhookInboxError(
    'inbox_unavailable',
    `The inbox database could not be reached and deliveries waiting for it already hold ${outage.bufferedBytes} bytes ` +
      `(storeRetry.maxBufferedBytes ${retry.maxBufferedBytes}): refused at once. ${describeThrown(error)}`,
    { cause: error instanceof WebhookInboxError ? error.cause : error },
  );
}

function pastBound(error: unknown, retry: ResolvedStoreRetry, attempts: number): WebhookInboxError {
  return new WebhookInboxError(
    'inbox_unavailable',
    `The inbox database could not be reached within storeRetry.maxWaitMs (${retry.maxWaitMs} ms, ${attempts} attempts): ` +
      describeThrown(error),
    { cause: error instanceof WebhookInboxError ? error.cause : error },
  );
}
