/**
 * The named checks behind a health verdict: what a probe may show anyone (a name and a state, never
 * a host, a worker, an error text or a table name).
 */

/** The checks of `inbox.health()`, in the order they are reported. */
export const HEALTH_CHECKS: readonly HealthCheckName[] = ['database', 'schema', 'workers', 'backlog', 'dead', 'refusals', 'gaps'];

/** The checks of `inbox.readiness()`: the ones that say whether this process can store deliveries. */
export const READINESS_CHECKS: readonly ReadinessCheckName[] = ['database', 'schema'];

/**
 * What one check found. `ok`: nothing to say. `warning`: something to look at, deliveries still
 * flow. `failing`: deliveries are refused or do not run. `unknown`: not checked, because a check
 * it depends on failed (no schema to read with the database away, no workers table before it).
 */
export type HealthCheckState = 'ok' | 'warning' | 'failing' | 'unknown';

/**
 * A check of `inbox.health()`: `database`, `schema`, `workers`, `backlog` (the oldest pending
 * delivery's age), `dead`, `refusals`, `gaps` (log gaps `inbox.watch()` found open, and the gaps and
 * failures of its scheduled reconcile).
 */
export type HealthCheckName = 'database' | 'schema' | 'workers' | 'backlog' | 'dead' | 'refusals' | 'gaps';

/** A check of `inbox.readiness()`: `database`, `schema`. */
export type ReadinessCheckName = 'database' | 'schema';

/** Each check's state, by name. */
export type HealthChecks = Readonly<Record<HealthCheckName, HealthCheckState>>;

/** Each readiness check's state, by name. */
export type ReadinessChecks = Readonly<Record<ReadinessCheckName, HealthCheckState>>;

/** One finding of a check that is not ok. */
export interface CheckFinding {
  readonly check: HealthCheckName;
  readonly severity: 'failing' | 'warning';
  readonly text: string;
}

/**
 * The states of `names`: `failing` or `warning` from the worst finding of each, `ok` for a check
 * that ran and found nothing, `unknown` for one that did not run.
 */
export function checkStates<Name extends HealthCheckName>(
  names: readonly Name[],
  ran: ReadonlySet<HealthCheckName>,
  findings: readonly CheckFinding[],
): Record<Name, HealthCheckState> {
  const states = {} as Record<Name, HealthCheckState>;
  for (const name of names) {
    const own = findings.filter((finding) => finding.check === name).map((finding) => finding.severity);
    states[name] = own.includes('failing') ? 'failing' : own.length > 0 ? 'warning' : ran.has(name) ? 'ok' : 'unknown';
  }
  return states;
}
