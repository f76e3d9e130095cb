/**
 * rack-webhooks/inbox: the durable log and work queue of deliveries, on PostgreSQL or PGlite.
 *
 * @module rack-webhooks/inbox
 */
export { createInbox } from './inbox/create-inbox.js';
export { connectReceiver } from './inbox/store/connect-receiver.js';
export { openPGlite } from './database/owner/open.js';
export type { OpenPGliteOptions, PGliteDirectory } from './database/owner/open.js';
export type { DirectoryQueryResult, DirectoryTransaction, Inbox, InboxOptions, TransactionOf } from './inbox/create-inbox.js';
export { WebhookInboxError } from './database/errors.js';
export type { WebhookInboxErrorCode } from './database/errors.js';
export type { StopOptions, Worker } from './inbox/work/worker.js';
export type { WorkOptions } from './inbox/work/options.js';
export type { BackoffOptions } from './inbox/work/backoff.js';
export type { StoreRetryOptions } from './inbox/store/outage/options.js';
export { httpAlertSink } from './inbox/watch/http-sink.js';
export type { HttpAlertSinkOptions } from './inbox/watch/http-sink.js';
export type {
  Alert,
  AlertRule,
  AlertRules,
  AlertSeverity,
  BacklogRuleOptions,
  CheckResult,
  DeadRuleOptions,
  LogGapsRuleOptions,
  NoWorkerRuleOptions,
  OverdueLifecycleRuleOptions,
  RefusalsRuleOptions,
  SilenceRuleOptions,
  WatchOptions,
  WatchReconcileOptions,
  Watcher,
} from './inbox/watch/types.js';
export type { RetainedState, RetentionOptions, RetentionResult } from './inbox/retention/options.js';
export { DEFAULT_TABLE } from './inbox/schema/table-name.js';
export { healthHandler } from './inbox/health/handler.js';
export type { HealthEndpoint, HealthEndpoints, HealthHandlerOptions, HealthSource, NodeResponse } from './inbox/health/handler.js';
export type { HealthOptions, HealthStatus, InboxHealth } from './inbox/health/health.js';
export type { InboxReadiness } from './inbox/health/readiness.js';
export type { HealthCheckName, HealthCheckState, HealthChecks, ReadinessCheckName, ReadinessChecks } from './inbox/health/checks.js';
export type { HealthLogger, HealthLogRecord } from './inbox/health/probe-log.js';
export type { LogGapEvidence, OpenLogGap } from './inbox/health/log-gaps.js';
export type { OpenReconcileGap, ReconcileGapEvidence, ReconcileProblem, ReconcileStatus } from './inbox/health/reconcile-gaps.js';
export type { RefusalCount, RefusalListener, RefusalMinute, RefusalQuery } from './inbox/health/refusals.js';
export type { WorkerInfo } from './inbox/health/workers.js';
export { schemaSql } from './inbox/schema/migrations.js';
export type {
  DeliveryAttempt,
  DeliveryFilter,
  DeliveryOrigin,
  DeliveryState,
  InboxStats,
  ListOptions,
  ListPage,
  MigrateResult,
  ReconciledEvidence,
  StoredDelivery,
  StoredDeliveryDetail,
} from './inbox/types.js';
export * from './receiver/public-contract.js';

// Reconciling the inbox against the rack's read API (issue 39).
export { createRackClient } from './rack-api/client.js';
export type { RackClient, RackClientOptions, RackFetch } from './rack-api/client.js';
export { createNodeRackFetch } from './rack-api/node-fetch.js';
export type { NodeRackFetchOptions } from './rack-api/node-fetch.js';
export { RackApiError } from './rack-api/errors.js';
export type { RackApiErrorCode } from './rack-api/errors.js';
export { decodeRackToken } from './rack-api/token.js';
export type {
  RackApp,
  RackBudget,
  RackBudgetState,
  RackBuild,
  RackRelease,
  RackShutdownState,
  RackSystem,
  RackTokenClaims,
} from './rack-api/types.js';
export { reconcile } from './reconcile/reconcile.js';
export type { ReconcileOptions } from './reconcile/reconcile.js';
export { findGaps } from './reconcile/gaps.js';
export type {
  AppSnapshot,
  CannotTell,
  GapEvidence,
  HeldDelivery,
  HeldEvent,
  HeldPage,
  RackSnapshot,
  ReconcileInbox,
  ReadList,
  ReconcileGap,
  ReconcileReport,
  ReconcileWindow,
  Uncovered,
} from './reconcile/types.js';
