import type { Clock } from '../clock.js';
import type { Driver } from '../../database/driver.js';
import { inboxError } from '../../database/errors.js';
import { deliveryStats } from '../operate/read.js';
import { LATEST_VERSION } from '../schema/migrations.js';
import type { TableNames } from '../schema/table-name.js';
import type { InboxStats } from '../types.js';
import { checkStates, HEALTH_CHECKS, type CheckFinding, type HealthCheckName, type HealthChecks } from './checks.js';
import { readLogGaps, type OpenLogGap } from './log-gaps.js';
import { schemaReasons, schemaVersion } from './readiness.js';
import { readReconcileStatus, type ReconcileStatus } from './reconcile-gaps.js';
import { readRefusals, type RefusalCount } from './refusals.js';
import { listWorkers, type WorkerInfo } from './workers.js';

/**
 * `ok`: nothing to do. `warning`: something an operator should look at, but deliveries are
 * received and run (dead deliveries, refusals, a schema newer than this package, no worker while
 * nothing waits). `unhealthy`: deliveries are refused or are not running (schema missing or
 * behind, deliveries pending and no live worker, the oldest pending one past `maxPendingAgeMs`).
 * `unreachable`: the database did not answer.
 */
export type HealthStatus = 'ok' | 'warning' | 'unhealthy' | 'unreachable';

/** Options of `inbox.health()`. */
export interface HealthOptions {
  /**
   * A pending delivery received longer ago than this makes the inbox unhealthy (workers are not
   * keeping up, or are stuck). With the default backoff a delivery finishes its 5 attempts in
   * about 15 s; raise this with a longer backoff.
   *
   * @defaultValue `900000` (15 minutes)
   */
  maxPendingAgeMs?: number;
}

/** What `inbox.health()` found. */
export interface InboxHealth {
  /** The overall verdict; see {@link HealthStatus}. */
  readonly status: HealthStatus;
  /** `status` is `ok` or `warning`: what a readiness probe or `inbox health`'s exit code 0 means. */
  readonly ok: boolean;
  /** One sentence per finding that is not ok, worst first; empty when `status` is `ok`. */
  readonly reasons: readonly string[];
  /**
   * Each check's state by name (`database`, `schema`, `workers`, `backlog`, `dead`, `refusals`, `gaps`):
   * what `healthHandler` shows anyone, without the reasons' text.
   */
  readonly checks: HealthChecks;
  /** When the check ran (this process's clock). */
  readonly checkedAt: Date;
  /** Whether the database answered. */
  readonly database: {
    /** Whether a statement went through. */
    readonly reachable: boolean;
    /** Why not, when it did not (never a password). */
    readonly error?: string;
  };
  /** The table's schema version against this package's. */
  readonly schema: {
    /** The highest version applied to the table; `null` when it was never migrated. */
    readonly version: number | null;
    /** The version this package's migrations reach. */
    readonly expected: number;
    /** `version === expected`. */
    readonly current: boolean;
    /** Applied by a newer rack-webhooks: upgrade this process's package. */
    readonly newerThanPackage: boolean;
  };
  /** Workers with a heartbeat row: `live` beat recently, `gone` stopped beating without `stop()`. */
  readonly workers: {
    /** Workers that beat within their last 3 beats. */
    readonly live: number;
    /** Workers that stopped beating without `stop()` (kept a day). */
    readonly gone: number;
    /** Every worker with a heartbeat row, live first. */
    readonly list: readonly WorkerInfo[];
  };
  /** `inbox.stats()`; `null` when the schema is missing or the database is away. */
  readonly stats: InboxStats | null;
  /** Milliseconds since the oldest pending delivery was received; `null` when none is pending. */
  readonly oldestPendingAgeMs: number | null;
  /** Dead deliveries: each waits for `retry`. */
  readonly dead: number;
  /** Refusals recorded in the last hour, by every process, most frequent code first (written every ~5 s). */
  readonly refusalsLastHour: {
    /** Every refusal of the hour. */
    readonly total: number;
    /** Per refusal code, most frequent first. */
    readonly byCode: readonly RefusalCount[];
  };
  /** Events the rack sent that never arrived, as `inbox.watch()` found them (its `logGaps` rule); `null` without an incidents table. */
  readonly logGaps: readonly OpenLogGap[] | null;
  /**
   * The scheduled reconcile of `inbox.watch({ reconcile })`: the gaps it keeps open (events the
   * rack's API proves it sent that never arrived) and whether it is failing or its token about to
   * lapse; both count in the `gaps` check. `null` without an incidents table.
   */
  readonly reconcile: ReconcileStatus | null;
}

const DEFAULT_MAX_PENDING_AGE_MS = 15 * 60_000;

/** A bound in ms: `fallback` when left out, else a finite number above 0 (or from 0, with `zero`). */
export function boundMs(name: string, value: number | undefined, fallback: number, zero = false): number {
  const resolved = value ?? fallback;
  if (!(zero ? resolved >= 0 : resolved > 0) || !Number.isFinite(resolved))
    throw new RangeError(`${name} must be a finite number of ms ${zero ? '>=' : '>'} 0, got ${String(resolved)}`);
  return resolved;
}

export const maxPendingAge = (options: HealthOptions) => boundMs('maxPendingAgeMs', options.maxPendingAgeMs, DEFAULT_MAX_PENDING_AGE_MS);

function minutes(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The parts of a report that no check filled in. */
function emptyHealth(checkedAt: Date, schema: InboxHealth['schema']) {
  return {
    checkedAt,
    schema,
    workers: { live: 0, gone: 0, list: [] },
    stats: null,
    oldestPendingAgeMs: null,
    dead: 0,
    refusalsLastHour: { total: 0, byCode: [] },
    logGaps: null,
    reconcile: null,
  };
}

/**
 * The report when the database did not answer (`unreachable`: also the CLI's when it cannot open
 * it), or refused a statement (`unhealthy`: permissions, say); `ran` are the checks that did run.
 */
export function failedHealth(
  message: string,
  reachable: boolean,
  at: { checkedAt?: Date; schema?: InboxHealth['schema']; ran?: readonly HealthCheckName[]; found?: readonly CheckFinding[] } = {},
): InboxHealth {
  const schema = at.schema ?? { version: null, expected: LATEST_VERSION, current: false, newerThanPackage: false };
  return {
    ...emptyHealth(at.checkedAt ?? new Date(), schema),
    status: reachable ? 'unhealthy' : 'unreachable',
    ok: false,
    reasons: [message],
    checks: checkStates(HEALTH_CHECKS, new Set(at.ran), [{ check: 'database', severity: 'failing', text: message }, ...(at.found ?? [])]),
    database: { reachable, error: message },
  };
}

export async function checkHealth(driver: Driver, names: TableNames, options: HealthOptions, clock: Clock): Promise<InboxHealth> {
  const maxPendingAgeMs = maxPendingAge(options);
  const checkedAt = clock.date();
  const schema = { version: null as number | null, expected: LATEST_VERSION, current: false, newerThanPackage: false };
  const failed = (error: unknown, found: readonly CheckFinding[] = []): InboxHealth => {
    const wrapped = inboxError(error, names.display, 'checking health');
    return failedHealth(wrapped.message, wrapped.code !== 'inbox_unavailable', {
      checkedAt,
      schema,
      ran: schema.version === null ? [] : ['schema'],
      found,
    });
  };
  try {
    schema.version = await schemaVersion(driver, names);
  } catch (error) {
    return failed(error);
  }
  schema.current = schema.version === LATEST_VERSION;
  schema.newerThanPackage = schema.version !== null && schema.version > LATEST_VERSION;
  const findings = schemaReasons(names, schema.version);
  // Version 4 brought the workers and refusals tables: below it (or unmigrated) there is nothing more to read.
  if (schema.version === null || schema.version < 4)
    return verdict({ ...emptyHealth(checkedAt, schema), database: { reachable: true } }, new Set(['database', 'schema']), findings);

  const query = (text: string, params?: readonly unknown[]) => driver.query(text, params ?? []);
  let read;
  try {
    read = await Promise.all([
      deliveryStats(driver, names),
      listWorkers(driver, names),
      readRefusals(driver, names, { since: new Date(checkedAt.getTime() - 3_600_000) }, clock) as Promise<RefusalCount[]>,
      readLogGaps(query, names),
      readReconcileStatus(query, names),
    ]);
  } catch (error) {
    return failed(error, findings);
  }
  const [stats, list, byCode, gaps, reconciled] = read;
  const live = list.filter((worker) => worker.live).length;
  const total = byCode.reduce((sum, refusal) => sum + refusal.count, 0);
  const found = (check: HealthCheckName, severity: CheckFinding['severity'], text: string) => findings.push({ check, severity, text });
  const waiting = stats.pending + stats.running;
  const oldest = stats.oldestPendingAgeMs;
  // What the rows say: workers, backlog, dead deliveries, refusals.
  if (live === 0 && waiting > 0)
    found('workers', 'failing', `${plural(waiting, 'delivery', 'deliveries')} waiting and no worker is running`);
  if (oldest !== null && oldest > maxPendingAgeMs)
    found('backlog', 'failing', `the oldest pending delivery has waited ${minutes(oldest)} (more than ${minutes(maxPendingAgeMs)})`);
  if (live === 0 && waiting === 0) found('workers', 'warning', 'no worker is running: new deliveries will wait until one starts');
  if (stats.dead > 0)
    found('dead', 'warning', `${plural(stats.dead, 'dead delivery', 'dead deliveries')}: retry with inbox.retry() once fixed`);
  if (total > 0) {
    const codes = byCode.map((r) => `${r.code} ${r.count}`).join(', ');
    found('refusals', 'warning', `${plural(total, 'refused delivery', 'refused deliveries')} in the last hour (${codes})`);
  }
  if (gaps !== undefined && gaps.length > 0)
    found('gaps', 'warning', `${plural(gaps.length, 'event')} the rack sent never arrived: ${gaps[0]!.summary}`);
  // The scheduled reconcile's gaps and troubles, under the `gaps` check too: events lost, or no longer looked for.
  for (const problem of reconciled?.problems ?? []) found('gaps', 'warning', problem.summary);
  const proven = reconciled?.gaps ?? [];
  if (proven.length > 0)
    found(
      'gaps',
      'warning',
      `${plural(proven.length, 'event')} the rack's API proves it sent never arrived (scheduled reconcile): ${proven[0]!.summary}`,
    );
  return verdict(
    {
      checkedAt,
      schema,
      database: { reachable: true },
      workers: { live, gone: list.length - live, list },
      stats,
      oldestPendingAgeMs: oldest,
      dead: stats.dead,
      refusalsLastHour: { total, byCode },
      logGaps: gaps ?? null,
      reconcile: reconciled ?? null,
    },
    new Set(HEALTH_CHECKS.filter((check) => check !== 'gaps' || gaps !== undefined)),
    findings,
  );
}

function verdict(
  found: Omit<InboxHealth, 'status' | 'ok' | 'reasons' | 'checks'>,
  ran: ReadonlySet<HealthCheckName>,
  findings: readonly CheckFinding[],
): InboxHealth {
  const unhealthy = findings.some((finding) => finding.severity === 'failing');
  const status: HealthStatus = unhealthy ? 'unhealthy' : findings.length > 0 ? 'warning' : 'ok';
  const ordered = [...findings.filter((f) => f.severity === 'failing'), ...findings.filter((f) => f.severity === 'warning')];
  return {
    status,
    ok: !unhealthy,
    reasons: ordered.map((finding) => finding.text),
    checks: checkStates(HEALTH_CHECKS, ran, findings),
    ...found,
  };
}
