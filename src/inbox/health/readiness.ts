/**
 * Readiness: the database answers and the schema is this package's, the cheap check behind
 * `inbox.readiness()` and `healthHandler`'s readiness probe.
 */
import type { Driver } from '../../database/driver.js';
import { inboxError } from '../../database/errors.js';
import { settleWithin } from '../../shared/timers.js';
import { LATEST_VERSION } from '../schema/migrations.js';
import type { TableNames } from '../schema/table-name.js';
import { checkStates, READINESS_CHECKS, type CheckFinding, type ReadinessChecks } from './checks.js';

/** What `inbox.readiness()` answers. */
export interface InboxReadiness {
  /** The database answers and the schema is this package's. */
  readonly ready: boolean;
  /** Why not, one sentence each; empty when ready. */
  readonly reasons: readonly string[];
  /** The state of `database` and `schema`: what `healthHandler`'s readiness shows anyone. */
  readonly checks: ReadinessChecks;
}

/** The schema version recorded in the migrations table; null when there is none. */
export async function schemaVersion(driver: Driver, names: TableNames): Promise<number | null> {
  try {
    const [row] = await driver.query(`SELECT max(version) AS version FROM ${names.migrations}`);
    return row?.['version'] === null || row?.['version'] === undefined ? null : Number(row['version']);
  } catch (error) {
    if (inboxError(error, names.display, 'reading the schema version').code === 'inbox_not_migrated') return null;
    throw error;
  }
}

/** Readiness when the database did not answer: `text` says why. */
const notReady = (text: string): InboxReadiness => ({
  ready: false,
  reasons: [text],
  checks: checkStates(READINESS_CHECKS, new Set(), [{ check: 'database', severity: 'failing', text }]),
});

/** A cheap check for readiness probes: the database answers and the schema is this package's. */
export async function checkReadiness(driver: Driver, names: TableNames): Promise<InboxReadiness> {
  let version: number | null;
  try {
    version = await schemaVersion(driver, names);
  } catch (error) {
    return notReady(inboxError(error, names.display, 'checking readiness').message);
  }
  const findings = schemaReasons(names, version);
  const failing = findings.filter((finding) => finding.severity === 'failing');
  return {
    ready: failing.length === 0,
    reasons: failing.map((finding) => finding.text),
    checks: checkStates(READINESS_CHECKS, new Set(READINESS_CHECKS), findings),
  };
}

export function schemaReasons(names: TableNames, version: number | null): CheckFinding[] {
  const migrate = 'run inbox.migrate() or rack-webhooks inbox migrate';
  const found = (severity: CheckFinding['severity'], text: string): CheckFinding[] => [{ check: 'schema', severity, text }];
  if (version === null) return found('failing', `the inbox table ${names.display} was never migrated: ${migrate}`);
  if (version < LATEST_VERSION)
    return found('failing', `the schema is at version ${version}, this package needs ${LATEST_VERSION}: ${migrate}`);
  if (version > LATEST_VERSION)
    return found(
      'warning',
      `the schema is at version ${version}, newer than this package's ${LATEST_VERSION}: upgrade rack-webhooks in this process`,
    );
  return [];
}

/**
 * `check`, answered within `timeoutMs` (not ready, the database failing, once the bound passes). A
 * statement can wait forever without failing: a database host gone silent behind an established
 * connection, a PGlite owner that stopped answering, a pool whose connections are all stuck. A probe
 * then hung (a balancer's probe times out as no answer, a person's curl waits), and every probe after
 * the cache lapsed started one more stuck query. So a check still under way is not started again:
 * the next call waits on the same one (with a bound of its own), and a stuck database costs one stuck
 * query, not one per probe.
 */
export function boundedReadiness(check: () => Promise<InboxReadiness>, timeoutMs: number): () => Promise<InboxReadiness> {
  let underWay: Promise<InboxReadiness> | undefined;
  return () => {
    if (underWay === undefined) {
      const started = Promise.resolve()
        .then(check)
        .finally(() => {
          if (underWay === started) underWay = undefined;
        });
      underWay = started;
    }
    return settleWithin(underWay, timeoutMs, () => notReady(`the database did not answer the readiness check within ${timeoutMs} ms`));
  };
}
