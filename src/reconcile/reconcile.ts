import type { RackClient } from '../rack-api/client.js';
import { findGaps } from './gaps.js';
import { readHeld } from './read-inbox.js';
import { readRack } from './read-rack.js';
import { recordGaps } from './record.js';
import type { ReconcileInbox, ReconcileReport } from './types.js';

/** Options of {@link reconcile}. */
export interface ReconcileOptions {
  /**
   * The window's start: events the rack sent from then on are looked for.
   *
   * @defaultValue 24 hours before the call
   */
  since?: Date;
  /**
   * Only these apps (a missing one fails with `rack_not_found`).
   *
   * @defaultValue every app of `GET /apps`
   */
  apps?: readonly string[];
  /**
   * Proofs this recent are reported as "cannot tell": each event goes out on its own concurrent
   * send, so one sent a moment ago may still be arriving.
   *
   * @defaultValue `60000`
   */
  graceMs?: number;
  /**
   * The largest `limit` asked of the build and release lists, which have no paging; a list that
   * still does not reach the window's start is reported in `uncovered`.
   *
   * @defaultValue `1000`
   */
  maxLimit?: number;
  /**
   * How long before the window a build may have started and still end inside it: the builds list
   * is read back this far past the window's start (it is ordered by start, its event goes out at the end).
   *
   * @defaultValue `7200000` (2 hours)
   */
  buildLookbackMs?: number;
  /**
   * Store each missing event the rack's records prove (never a "cannot tell" one) as a
   * reconstructed delivery: `origin: 'reconciled'`, no signature, a body built from the records,
   * pending, so that the app's workers run its handlers once (`context.delivery.origin` is
   * `'reconciled'`). A late real arrival of the event is stored as its duplicate and runs nothing.
   * Budget alerts (`app:budget:threshold`, `cap`) are reported, not recorded. Each gap recorded
   * gets `recorded: { id }`.
   *
   * @defaultValue `false`: read-only on both sides
   */
  record?: boolean;
}

/** The inbox is read from this long before the window: an event's time follows its proof's by a little. */
const INBOX_SLACK_MS = 3_600_000;

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`reconcile: ${name} must be a number of 0 or more, got ${value}`);
  return value;
}

/**
 * Names every event the rack sent (or tried to send) within the window that the inbox does not
 * hold, from what the rack's API proves (rack-api.md section 5): `release:create` per release,
 * `build:create` per finished source build, `app:budget:threshold` / `cap` per alert stamp, and
 * the auto-shutdown events whose `…NotificationFiredAt` stamps are set. What the API cannot prove
 * either way (an app's creation, the promote history, a build that may be an import) is reported
 * in `cannotTell`, never as missing. Read-only on both sides, unless `record: true` (which stores
 * each proven gap as a reconstructed delivery for the app's workers to run).
 *
 * @param inbox - The inbox to check (an `Inbox` of rack-webhooks/inbox; its `list` is read, and with `record: true` it must be one made by `createInbox`).
 * @param client - A client of the rack's API (`createRackClient`).
 * @param options - The window, the apps, the grace period, how deep the lists are read.
 * @returns The gaps, what cannot be told, and the lists that did not cover the window.
 * @throws RackApiError when the rack cannot be read; WebhookInboxError when the inbox cannot.
 *
 * @example
 * ```ts
 * import { createInbox, createRackClient, reconcile } from 'rack-webhooks/inbox';
 *
 * const report = await reconcile(inbox, createRackClient({ url: process.env.RACK_URL! }));
 * for (const gap of report.gaps) console.log(`missing ${gap.action} ${gap.app} ${gap.id}`);
 * ```
 */
export async function reconcile(inbox: ReconcileInbox, client: RackClient, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const graceMs = positive('graceMs', options.graceMs, 60_000);
  const maxLimit = positive('maxLimit', options.maxLimit, 1000);
  const buildLookbackMs = positive('buildLookbackMs', options.buildLookbackMs, 7_200_000);
  const since = options.since ?? new Date(Date.now() - 86_400_000);
  if (!(since instanceof Date) || Number.isNaN(since.getTime())) throw new RangeError('reconcile: since must be a valid Date');
  const rack = await readRack(
    client,
    since,
    { firstLimit: 50, maxLimit: Math.max(1, Math.floor(maxLimit)), buildLookbackMs },
    options.apps,
  );
  // The inbox is read after the rack: an event the rack sent before its records were read has had
  // the read's time to arrive too.
  const held = await readHeld(inbox, since.getTime() - INBOX_SLACK_MS);
  const report = findGaps(rack, held, { since, until: rack.readAt, graceMs });
  return options.record === true ? { ...report, gaps: await recordGaps(inbox, client, report.gaps) } : report;
}
