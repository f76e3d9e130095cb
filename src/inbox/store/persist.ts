import { headerInputToString } from '../../signature/parse-header.js';
import { deliveryKeys } from '../../receiver/dedup-keys.js';
import type { DeliveryToStore, ReceiverConnection, StoreStep, StoredRow } from '../../receiver/inbox-contract.js';
import { errorCode, logContext } from '../../receiver/log.js';
import type { ReceiverLogRecord } from '../../receiver/log-record.js';

/** The log record is named after the error's code: unavailable, not migrated, or refused. */
function inboxLogEvent(error: unknown): 'inbox_unavailable' | 'inbox_not_migrated' | 'inbox_failed' {
  const code = errorCode(error);
  return code === 'inbox_not_migrated' || code === 'inbox_failed' ? code : 'inbox_unavailable';
}

/**
 * Step 3 (with an inbox): one committed row is the claim. The inbox's unique keys are the same
 * two keys a dedup store holds, kept until the row is pruned rather than for a TTL. The code of
 * this step ships with `rack-webhooks/inbox` (`connectReceiver`), not in every receiver's bundle.
 */
export function createPersistStep({ inbox, runtime, customClock }: ReceiverConnection): StoreStep {
  // The inbox may hold a delivery while its database is away; the outage's records (its start,
  // its end) go to the receiver's logger, timed by the inbox.
  // Passed through as timed: turned into a start on the receiver's clock and measured again, a
  // duration gained the time between the two readings (751 ms for an outage of 750 on the inbox's).
  const log = runtime.logging ? (record: ReceiverLogRecord) => runtime.log(record) : undefined;
  const storeDelivery = (delivery: DeliveryToStore) => inbox.storeDelivery(delivery, { log });
  // The outcome's info record, with the delivery's context. Absent without a logger, so that
  // `info?.(...)` builds nothing: not the record, not its context.
  const info = runtime.logging
    ? (
        record: Pick<ReceiverLogRecord, 'event' | 'message' | 'deliveryId' | 'duplicateOf'>,
        event: Parameters<typeof logContext>[0],
        verified: Parameters<typeof logContext>[1],
        started: number,
      ) => runtime.log({ level: 'info', ...record, ...logContext(event, verified) }, started)
    : undefined;
  return async ({ raw, verified, header }, { event, ignored, known }, started) => {
    const { bodyKey, eventKey } = await deliveryKeys(raw, event);
    const recordOnly = ignored || !known;
    let stored: StoredRow | undefined;
    try {
      stored = await storeDelivery({
        body: raw,
        signature: headerInputToString(header),
        signedAt: verified.timestamp,
        secretIndex: verified.secretIndex,
        event,
        bodyKey,
        eventKey,
        ignored: recordOnly,
        receivedAt: customClock ? new Date(started) : undefined,
      });
    } catch (error) {
      // Loudly: the rack will not send this delivery again.
      runtime.log(
        {
          level: 'error',
          event: inboxLogEvent(error),
          message: 'the inbox could not store a verified delivery; it was refused and the rack will not resend it',
          code: errorCode(error),
          ...logContext(event, verified),
        },
        started,
      );
      throw error;
    }
    if (stored === undefined) {
      info?.({ event: 'duplicate', message: 'duplicate delivery: a copy with the same bytes is already stored' }, event, verified, started);
      return { outcome: 'duplicate', event };
    }
    const { id, duplicateOf } = stored;
    if (duplicateOf !== undefined) {
      // Kept as its own row (the log keeps every distinct body), but no handler runs for it.
      info?.(
        {
          event: 'duplicate',
          message: `the same event as delivery ${duplicateOf} (it differs only in time); stored as a duplicate, no handler runs`,
          deliveryId: id,
          duplicateOf,
        },
        event,
        verified,
        started,
      );
      return { outcome: 'duplicate', event, id, duplicateOf };
    }
    info?.(
      {
        event: recordOnly ? 'ignored' : 'accepted',
        message: recordOnly
          ? 'delivery stored as ignored (unknown action or ignore option)'
          : 'delivery stored; a worker will run its handlers',
        deliveryId: id,
      },
      event,
      verified,
      started,
    );
    return { outcome: recordOnly ? 'ignored' : 'accepted', event, id };
  };
}
