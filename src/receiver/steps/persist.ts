import { headerInputToString } from '../../signature/parse-header.js';
import { deliveryKeys } from '../dedup-keys.js';
import type { DeliveryInbox, DeliveryToStore, StoredRow } from '../inbox-contract.js';
import { errorCode, logContext } from '../log.js';
import type { Reporting } from '../reporting.js';
import type { ReceiveResult, ReceiverLogRecord } from '../types.js';
import type { ParsedDelivery } from './parse.js';
import type { VerifiedDelivery } from './verify.js';

/**
 * Step 3 (with an inbox): one committed row is the claim. The inbox's unique keys are the same
 * two keys a dedup store holds, kept until the row is pruned rather than for a TTL.
 */
/** The log record is named after the error's code: unavailable, not migrated, or refused. */
function inboxLogEvent(error: unknown): 'inbox_unavailable' | 'inbox_not_migrated' | 'inbox_failed' {
  const code = errorCode(error);
  return code === 'inbox_not_migrated' || code === 'inbox_failed' ? code : 'inbox_unavailable';
}

export type PersistStep = (verified: VerifiedDelivery, parsed: ParsedDelivery, started: number) => Promise<ReceiveResult>;

export function createPersistStep(inbox: DeliveryInbox<unknown>, reporting: Reporting, customClock: boolean): PersistStep {
  // The inbox may hold a delivery while its database is away; the outage's records (its start,
  // its end) go to the receiver's logger, timed by the inbox.
  const log = reporting.logging ? (record: ReceiverLogRecord) => reporting.log(reporting.clock() - record.durationMs, record) : undefined;
  const storeDelivery = (delivery: DeliveryToStore) => inbox.storeDelivery(delivery, { log });
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
      reporting.log(started, {
        level: 'error',
        event: inboxLogEvent(error),
        message: 'the inbox could not store a verified delivery; it was refused and the rack will not resend it',
        code: errorCode(error),
        ...logContext(event, verified),
      });
      throw error;
    }
    if (stored === undefined) {
      if (reporting.logging)
        reporting.log(started, {
          level: 'info',
          event: 'duplicate',
          message: 'duplicate delivery: a copy with the same bytes is already stored',
          ...logContext(event, verified),
        });
      return { outcome: 'duplicate', event };
    }
    const { id, duplicateOf } = stored;
    if (duplicateOf !== undefined) {
      // Kept as its own row (the log keeps every distinct body), but no handler runs for it.
      if (reporting.logging)
        reporting.log(started, {
          level: 'info',
          event: 'duplicate',
          message: `the same event as delivery ${duplicateOf} (it differs only in time); stored as a duplicate, no handler runs`,
          deliveryId: id,
          duplicateOf,
          ...logContext(event, verified),
        });
      return { outcome: 'duplicate', event, id, duplicateOf };
    }
    if (reporting.logging) {
      reporting.log(started, {
        level: 'info',
        event: recordOnly ? 'ignored' : 'accepted',
        message: recordOnly
          ? 'delivery stored as ignored (unknown action or ignore option)'
          : 'delivery stored; a worker will run its handlers',
        deliveryId: id,
        ...logContext(event, verified),
      });
    }
    return { outcome: recordOnly ? 'ignored' : 'accepted', event, id };
  };
}
