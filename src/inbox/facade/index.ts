/**
 * The inbox as the CLI (src/cli) and the console's server (src/console/server) see it: the one
 * module they import from src/inbox; the console's page has page.ts beside it
 * (test/architecture/layers.test.ts fails on any other import). Everything here lives in its own
 * folder and is only re-exported, so the tools depend on this list rather than on the inbox's
 * layout, which can change without touching them. Users' code imports the public entry,
 * src/inbox.ts (rack-webhooks/inbox), instead.
 */

// Opening an inbox, or the database behind one, for an operation. `composeInbox` hands over its
// ports: the operator API (list, get, retry, replay, stats, prune, history, alerts, and the
// console's reads of what changed) and the monitor (health, workers, refusals, log gaps); the inbox
// itself only where a receiver stores into it (`listen --inbox`, `inbox import`) or for migrate.
export { composeInbox, type Inbox } from '../create-inbox.js';
export type { InboxMonitor } from '../monitor.js';
export type { InboxOperator } from '../operator.js';
export type { HistoryHour, HistorySpan, InboxHistory } from '../operate/history.js';
export { MissingPeerError, openDirectory, type PGliteDirectory } from '../../database/owner/open.js';
export { DEFAULT_TABLE, resolveTableNames, type TableNames } from '../schema/table-name.js';

// Errors, deliveries and their JSON (`inbox list --json`, `inbox show --json` and the console's API print the same).
export { inboxError, WebhookInboxError } from '../../database/errors.js';
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

// Health and the alerts the watcher keeps open.
export { failedHealth, type InboxHealth } from '../health/health.js';
export type { OpenLogGap } from '../health/log-gaps.js';
export type { ReconcileStatus } from '../health/reconcile-gaps.js';
export type { RefusalCount } from '../health/refusals.js';
export type { WorkerInfo } from '../health/workers.js';
export { formatTime } from '../watch/incidents.js';
export type { OpenAlert } from '../watch/incidents.js';

// The inbox's clock, for the console's polls (a test drives them).
export { systemClock, type Clock } from '../clock.js';

// Following an inbox (`inbox forward`).
export { holdOneConnection } from '../follow/connection.js';
export { followInbox, type FollowedDelivery, type FollowResult, type ForwardVerdict } from '../follow/follow.js';
export { startCursor } from '../follow/read.js';
