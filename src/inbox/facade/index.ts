/**
 * The inbox as the CLI (src/cli) and the console's server (src/console/server) see it: the one
 * module they import from src/inbox; the console's page has page.ts beside it
 * (test/architecture/layers.test.ts fails on any other import). Everything here lives in its own
 * folder and is only re-exported, so the tools depend on this list rather than on the inbox's
 * layout, which can change without touching them. Users' code imports the public entry,
 * src/inbox.ts (rack-webhooks/inbox), instead.
 */

// Opening an inbox, or the database behind one, for an operation.
export { createInbox, type Inbox } from '../create-inbox.js';
export { MissingPeerError, openDirectory, type PGliteDirectory } from '../database/owner/open.js';
export { DEFAULT_TABLE, resolveTableNames, type TableNames } from '../schema/table-name.js';

// Errors, deliveries and their JSON (`inbox list --json`, `inbox show --json` and the console's API print the same).
export { inboxError, WebhookInboxError } from '../errors.js';
export { attemptJson, deliveryJson } from '../json.js';
export {
  DELIVERY_STATES,
  type DeliveryAttempt,
  type DeliveryFilter,
  type DeliveryState,
  type InboxStats,
  type ListOptions,
  type StoredDelivery,
  type StoredDeliveryDetail,
} from '../types.js';

// Reads over one statement at a time (the CLI's pool or PGlite): history, what needs an operator, changes.
export type { Query } from '../queries/query.js';
export { readAppAttention } from '../operate/app-attention.js';
export { readHistory, type HistoryHour, type HistorySpan, type InboxHistory } from '../operate/history.js';
export { readChangeFingerprint, readIdsAfter } from '../operate/poll.js';

// Health and the alerts the watcher keeps open.
export { checkStates, HEALTH_CHECKS } from '../health/checks.js';
export type { InboxHealth } from '../health/health.js';
export { readLogGaps, type OpenLogGap } from '../health/log-gaps.js';
export type { RefusalCount } from '../health/refusals.js';
export type { WorkerInfo } from '../health/workers.js';
export { formatTime } from '../watch/incidents.js';
export { readOpenAlerts, type OpenAlert } from '../watch/open-alerts.js';

// The inbox's clock, for the console's polls (a test drives them).
export { systemClock, type Clock } from '../clock.js';

// Following an inbox (`inbox forward`).
export { holdOneConnection } from '../follow/connection.js';
export { followInbox, type FollowedDelivery, type FollowResult, type ForwardVerdict } from '../follow/follow.js';
export { startCursor } from '../follow/read.js';
