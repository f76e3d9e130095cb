/**
 * The comparison: which events the rack's records prove were sent (rack-api.md sections 3 and 5)
 * and the inbox does not hold. A pure function of what was read, with no false positives: what
 * the records cannot prove either way goes to `cannotTell`, never to `gaps`.
 */
import { LIFECYCLE_TIME_FIELDS } from '../events/natural-key.js';
import { ZERO_TIME, type RackShutdownState } from '../rack-api/types.js';
import { buildData, releaseData, shutdownData } from './reconstruct.js';
import type {
  AppSnapshot,
  CannotTell,
  HeldEvent,
  RackSnapshot,
  ReconcileGap,
  ReconcileReport,
  ReconcileWindow,
  Uncovered,
} from './types.js';

export const SHUTDOWN_PREFIX = 'app:budget:auto-shutdown:';

/** A budget alert's event carries the tick time it was stamped with, at most this much later (the send follows the write). */
const ALERT_SLACK_MS = 60_000;

/** The held events, indexed by what each kind is matched on. */
class Held {
  readonly #keys = new Set<string>();
  readonly #alerts = new Map<string, number[]>();

  constructor(events: readonly HeldEvent[]) {
    for (const event of events) {
      const app = event.app ?? '';
      if (event.id !== null) this.#keys.add(`${event.action}\n${app}\n${event.id.toUpperCase()}`);
      if (event.tickId !== null) this.#keys.add(`${event.action}\n${app}\n${event.tickId}`);
      if (event.action === 'app:budget:threshold' || event.action === 'app:budget:cap') {
        const key = `${event.action}\n${app}`;
        this.#alerts.set(key, [...(this.#alerts.get(key) ?? []), event.eventMs]);
      }
    }
  }

  has(action: string, app: string, id: string): boolean {
    return this.#keys.has(`${action}\n${app}\n${id.startsWith('tick-') ? id : id.toUpperCase()}`);
  }

  /** An alert of this kind sent at or after the stamp (the tick writes it, then sends). */
  hasAlert(action: string, app: string, stampMs: number): boolean {
    return (this.#alerts.get(`${action}\n${app}`) ?? []).some((ms) => ms >= stampMs - ALERT_SLACK_MS);
  }
}

/** A proof's time against the window: `in`, `out`, or `recent` (inside the grace: may still be arriving). */
function placed(time: string | null | undefined, window: ReconcileWindow): 'in' | 'out' | 'recent' {
  if (time === null || time === undefined || time === '' || time === ZERO_TIME) return 'out';
  const ms = Date.parse(time);
  if (Number.isNaN(ms) || ms < window.since.getTime() || ms > window.until.getTime()) return 'out';
  return ms > window.until.getTime() - window.graceMs ? 'recent' : 'in';
}

interface Findings {
  readonly gaps: ReconcileGap[];
  readonly cannotTell: CannotTell[];
}

const RECENT = 'the proof is newer than the grace period: the event may still be on its way';

function check(findings: Findings, window: ReconcileWindow, held: Held, gap: ReconcileGap): void {
  if (held.has(gap.action, gap.app, gap.id)) return;
  const where = placed(gap.evidence.at, window);
  if (where === 'in') findings.gaps.push(gap);
  else if (where === 'recent') findings.cannotTell.push({ action: gap.action, app: gap.app, id: gap.id, reason: RECENT });
}

function releasesAndBuilds(snapshot: AppSnapshot, window: ReconcileWindow, held: Held, findings: Findings): void {
  const app = snapshot.app.name;
  const { route } = snapshot.releases;
  for (const release of snapshot.releases.records) {
    check(findings, window, held, {
      action: 'release:create',
      app,
      id: release.id,
      evidence: { route, field: 'id', value: release.id, at: release.created },
      data: releaseData(app, release),
    });
  }
  for (const build of snapshot.builds.records) {
    if (build.status !== 'complete' && build.status !== 'failed') continue; // still running: owes nothing yet
    const evidence = { route: snapshot.builds.route, field: 'status', value: build.status, at: build.ended };
    // No field records a build's origin: one no process ran, or with an image import's reason or
    // events, may be an import, which sends no build:create (rack-api.md 2.2, 5).
    const imported =
      build.process === '' ||
      build.reason !== '' ||
      held.has('build:import-image:start', app, build.id) ||
      held.has('build:import-image:done', app, build.id);
    if (imported) {
      if (!held.has('build:create', app, build.id) && placed(build.ended, window) !== 'out')
        findings.cannotTell.push({
          action: 'build:create',
          app,
          id: build.id,
          reason: 'the build may be an import, which sends no build:create',
        });
      continue;
    }
    const status = build.status === 'complete' ? 'success' : 'error';
    check(findings, window, held, { action: 'build:create', app, id: build.id, status, evidence, data: buildData(app, build) });
  }
}

const LIFECYCLE_STAMPS = [
  ['armed', 'armedNotificationFiredAt'],
  ['fired', 'firedNotificationFiredAt'],
  ['failed', 'failedNotificationFiredAt'],
  ['expired', 'expiredNotificationFiredAt'],
  ['restored', 'restoredNotificationFiredAt'],
] as const;

/** Stamps whose events take a new tick id each time (or whose state is deleted after the send): nothing to match. */
const WEAK_STAMPS = [
  ['cancelled', 'cancelledNotificationFiredAt'],
  ['noop', 'noopNotificationFiredAt'],
  ['flap-suppressed', 'flapSuppressedNotificationFiredAt'],
] as const;

function autoShutdown(snapshot: AppSnapshot, window: ReconcileWindow, held: Held, findings: Findings): void {
  const app = snapshot.app.name;
  const route = `/apps/${encodeURIComponent(app)}/budget/shutdown-state`;
  if (snapshot.shutdown === 'corrupt') {
    findings.cannotTell.push({
      action: `${SHUTDOWN_PREFIX}*`,
      app,
      id: '',
      reason: 'the rack cannot read its stored auto-shutdown state (500 malformed)',
    });
    return;
  }
  const state: RackShutdownState | null = snapshot.shutdown;
  if (state === null) return;
  const tick = state.shutdownTickId;
  for (const [step, field] of LIFECYCLE_STAMPS) {
    const value = state[field];
    if (value === null) continue;
    const data = shutdownData(app, step, state, LIFECYCLE_TIME_FIELDS.get(step)!, value);
    check(findings, window, held, {
      action: `${SHUTDOWN_PREFIX}${step}`,
      app,
      id: tick,
      evidence: { route, field, value, at: value },
      data,
    });
  }
  for (const [step, field] of WEAK_STAMPS) {
    const value = state[field];
    if (value !== null && placed(value, window) !== 'out' && !held.has(`${SHUTDOWN_PREFIX}${step}`, app, tick))
      findings.cannotTell.push({
        action: `${SHUTDOWN_PREFIX}${step}`,
        app,
        id: value,
        reason: `${field} is set, but this event takes a tick id of its own: it cannot be matched`,
      });
  }
}

function budgetAlerts(snapshot: AppSnapshot, window: ReconcileWindow, held: Held, findings: Findings): void {
  const app = snapshot.app.name;
  const state = snapshot.budget.state;
  if (state === null) return;
  for (const kind of ['threshold', 'cap'] as const) {
    const field = `alert-fired-at-${kind}`;
    const value = state[field];
    if (typeof value !== 'string') continue;
    const action = `app:budget:${kind}`;
    if (held.hasAlert(action, app, Date.parse(value))) continue;
    const where = placed(value, window);
    const evidence = { route: `/apps/${encodeURIComponent(app)}/budget`, field: `state.${field}`, value, at: value };
    if (where === 'in') findings.gaps.push({ action, app, id: value, evidence, data: { app } });
    else if (where === 'recent') findings.cannotTell.push({ action, app, id: value, reason: RECENT });
  }
}

/** What the API shows but cannot date or order: an app's creation, the promote of its current release. */
function undatable(snapshot: AppSnapshot, held: Held, findings: Findings): void {
  const { name, release } = snapshot.app;
  if (!held.has('app:create', name, name))
    findings.cannotTell.push({
      action: 'app:create',
      app: name,
      id: name,
      reason: 'apps carry no creation time: it may predate the window or the inbox',
    });
  if (release !== '' && !held.has('release:promote', name, release))
    findings.cannotTell.push({
      action: 'release:promote',
      app: name,
      id: release,
      reason: 'the rack keeps no promote history: only the current release is known, not when it was promoted',
    });
}

/**
 * The gaps between what the rack's records prove it sent within the window and what the inbox
 * holds, with what cannot be told either way and the lists that did not cover the window.
 *
 * @param rack - The records read from the rack's API.
 * @param held - Every event the inbox holds that could match (any state).
 * @param window - The window judged, and the grace before its end.
 */
export function findGaps(rack: RackSnapshot, held: readonly HeldEvent[], window: ReconcileWindow): ReconcileReport {
  const index = new Held(held);
  const findings: Findings = { gaps: [], cannotTell: [] };
  const uncovered: Uncovered[] = [];
  for (const snapshot of rack.apps) {
    releasesAndBuilds(snapshot, window, index, findings);
    budgetAlerts(snapshot, window, index, findings);
    autoShutdown(snapshot, window, index, findings);
    undatable(snapshot, index, findings);
    for (const list of [snapshot.builds, snapshot.releases]) {
      if (!list.covered) uncovered.push({ app: snapshot.app.name, route: list.route, limit: list.limit });
    }
  }
  for (const app of rack.gone ?? [])
    findings.cannotTell.push({ action: '*', app, id: '', reason: 'the app was deleted while it was read: its records went with it' });
  const at = (gap: ReconcileGap) => Date.parse(gap.evidence.at);
  return {
    since: window.since,
    until: window.until,
    apps: rack.apps.map((snapshot) => snapshot.app.name),
    gaps: findings.gaps.sort((a, b) => at(a) - at(b)),
    cannotTell: findings.cannotTell,
    uncovered,
  };
}
