/**
 * How `record: true` reaches the inbox's table without src/reconcile importing src/inbox (the inbox's
 * watcher runs reconciles, so the arrow points from the inbox to here): createInbox registers its
 * table's recorder against the inbox object, and a reconcile looks it up.
 */
import type { GapEvidence } from './types.js';

/** An event rebuilt from the rack's API, to store as a reconciled delivery. */
export interface ReconstructedEvent {
  readonly action: string;
  readonly status: string;
  /** RFC 3339: the time the evidence gives for the send. */
  readonly timestamp: string;
  /** Every value a string, as the rack sends them. */
  readonly data: Readonly<Record<string, string>>;
}

/** What recording one event did: `stored` false when a reconciled row held it already (`id` is that row's). */
export type RecordOutcome =
  | { readonly id: string; readonly stored: boolean }
  | {
      /** A received delivery of the event is stored (it arrived since the reconcile read the inbox): nothing to record. */
      readonly received: true;
    };

export type RecordReconciled = (event: ReconstructedEvent, evidence: GapEvidence) => Promise<RecordOutcome>;

const recorders = new WeakMap<object, RecordReconciled>();

/** Called by createInbox: the reconcile of an inbox finds its table's recorder here (the Inbox interface stays as it is). */
export function registerRecordReconciled(inbox: object, record: RecordReconciled): void {
  recorders.set(inbox, record);
}

/** The recorder of an inbox from createInbox; `undefined` for any other object. */
export function recordReconciledOf(inbox: object): RecordReconciled | undefined {
  return recorders.get(inbox);
}
