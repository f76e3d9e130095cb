/**
 * Each app's state, folded by createRackState from every delivery in the inbox, kept up to date by
 * applying only the rows stored since the last look (ids grow with arrival; the fold takes events
 * in any order). An app's timeline is read from the inbox itself, and its auto-shutdown phases are
 * the transitions of a fresh fold over those events in order.
 */
import type { AnyWebhookEvent } from '../../../events/types.js';
import type { InboxOperator, OpenLogGap } from '../../../inbox/facade/index.js';
import { createRackState } from '../../../state/create-rack-state.js';
import type { Anomaly, AutoShutdownPhase, RackState } from '../../../state/types.js';
import { ConsoleRequestError } from './http.js';

const BATCH = 1000;
/**
 * Ids are taken at insert, rows become visible at commit: a row may appear after a higher id was
 * read. Each pass re-reads this many ids below the highest seen; the fold ignores what it already
 * has, and `applied` ids are remembered so nothing is counted twice.
 */
const LATE_COMMIT_WINDOW = 256n;
export const TIMELINE_LIMIT = 500;
/** Auto-shutdown events read from before the timeline to seed its first phase: a few lifecycles' worth. */
const SEED_LIMIT = 50;

export type Lane = 'auto-shutdown' | 'budget' | 'promote' | 'build' | 'scale' | 'other';

export function laneOf(action: string): Lane {
  if (action.startsWith('app:budget:auto-shutdown:')) return 'auto-shutdown';
  if (action.startsWith('app:budget:')) return 'budget';
  if (action === 'release:promote' || action.startsWith('app:promote:')) return 'promote';
  if (action.startsWith('build:')) return 'build';
  if (action.startsWith('app:scale-override:') || action.startsWith('app:triggers-override:')) return 'scale';
  return 'other';
}

/**
 * The short name drawn on the timeline: the action's last segment (its lane names the rest), and
 * the status when it is not plain success. In the catch-all lane the segments after `app:` stay,
 * so `release:create` and `app:create` do not both read "create".
 */
export function labelOf(event: AnyWebhookEvent): string {
  const segments = event.action.split(':');
  const last =
    event.action === 'release:promote'
      ? 'promote'
      : laneOf(event.action) === 'other'
        ? segments.filter((segment) => segment !== 'app').join(' ')
        : segments[segments.length - 1]!;
  const status = (event as { status?: unknown }).status;
  return typeof status === 'string' && status !== 'success' && !saysTheSame(last, status) ? `${last} ${status}` : last;
}

/** "errored" already says "error", "cancelled" says "cancelled", "failed" says "failure": no second word. */
function saysTheSame(label: string, status: string): boolean {
  const word = label.slice(label.lastIndexOf(' ') + 1).toLowerCase();
  const stem = status.toLowerCase().slice(0, 4);
  return stem.length > 0 && (word.startsWith(stem) || word.includes(status.toLowerCase()));
}

/** Identifies an event when the fold hands back a copy rather than the object applied. */
function eventKey(event: AnyWebhookEvent): string {
  return `${event.action}\u0000${event.timestamp}\u0000${String((event as { status?: unknown }).status)}`;
}

export class AppsIndex {
  private readonly state: RackState = createRackState();
  private readonly deliveryOf = new Map<string, string>();
  private readonly eventsPerApp = new Map<string, number>();
  private readonly recentlyApplied = new Set<bigint>();
  private lastId = 0n;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly operator: Pick<InboxOperator, 'list' | 'idsAfter' | 'appAttention'>,
    /** Rows read per statement; small in tests, to cross batch and digit boundaries cheaply. */
    private readonly batch = BATCH,
    /** The log gaps inbox.watch() keeps open: shown with the anomalies of their app. */
    private readonly openGaps: () => Promise<readonly OpenLogGap[] | undefined> = () => Promise.resolve(undefined),
  ) {}

  /** Folds in what arrived since the last call; concurrent callers share one pass. */
  refresh(): Promise<void> {
    this.refreshing ??= this.readNew().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async readNew(): Promise<void> {
    let from = this.lastId > LATE_COMMIT_WINDOW ? this.lastId - LATE_COMMIT_WINDOW : 0n;
    for (;;) {
      const read = await this.operator.idsAfter(from, this.batch);
      const ids = read.filter((id) => !this.recentlyApplied.has(id));
      if (ids.length > 0) {
        const page = await this.operator.list({ ids: ids.map(String), includeEvents: true, limit: Math.min(this.batch, 1000) });
        for (const delivery of page.deliveries) this.applyDelivery(delivery);
      }
      if (read.length === 0) return;
      from = read[read.length - 1]!;
      if (from > this.lastId) this.lastId = from;
      this.forgetBelow(this.lastId - LATE_COMMIT_WINDOW);
      if (read.length < this.batch) return;
    }
  }

  private applyDelivery(delivery: { id: string; event?: AnyWebhookEvent | undefined }): void {
    this.recentlyApplied.add(BigInt(delivery.id));
    if (delivery.event === undefined) return;
    const result = this.state.apply(delivery.event);
    if (!result.applied || result.app === undefined) return;
    this.deliveryOf.set(eventKey(delivery.event), delivery.id);
    this.eventsPerApp.set(result.app, (this.eventsPerApp.get(result.app) ?? 0) + 1);
  }

  /** Only the window below the highest id needs remembering. */
  private forgetBelow(floor: bigint): void {
    for (const id of this.recentlyApplied) if (id <= floor) this.recentlyApplied.delete(id);
  }

  private async anomalies(app?: string) {
    const found = this.state
      .anomalies()
      .filter((anomaly) => app === undefined || anomaly.app === app)
      .map((anomaly: Anomaly) => ({
        app: anomaly.app,
        kind: anomaly.kind as string,
        id: anomaly.id,
        message: anomaly.message,
        deliveryIds: anomaly.events.map((event) => this.deliveryOf.get(eventKey(event))).filter((id): id is string => id !== undefined),
      }));
    // An event the log shows was lost (rack-api.md section 4), as the watcher last found it.
    for (const gap of (await this.openGaps()) ?? []) {
      if (app === undefined || gap.app === app)
        found.push({ app: gap.app, kind: 'log_gap', id: gap.id, message: gap.summary, deliveryIds: gap.evidence.map((e) => e.deliveryId) });
    }
    return found;
  }

  async summaries() {
    await this.refresh();
    const attention = await this.operator.appAttention();
    const anomaliesPerApp = new Map<string, number>();
    for (const anomaly of await this.anomalies()) anomaliesPerApp.set(anomaly.app, (anomaliesPerApp.get(anomaly.app) ?? 0) + 1);
    return {
      apps: this.state.apps().map((state) => ({
        app: state.app,
        phase: state.autoShutdown.phase,
        ...(state.autoShutdown.expectedShutdownAt === undefined ? {} : { expectedShutdownAt: state.autoShutdown.expectedShutdownAt }),
        breaker: state.breaker.state,
        updatedAt: state.updatedAt,
        anomalies: anomaliesPerApp.get(state.app) ?? 0,
        events: this.eventsPerApp.get(state.app) ?? 0,
        ...(attention.get(state.app) ?? { dead: 0, failing: 0, pending: 0 }),
      })),
    };
  }

  async detail(app: string) {
    await this.refresh();
    const state = this.state.app(app);
    if (state === undefined) throw new ConsoleRequestError(404, 'not_found', `no events for an app named ${JSON.stringify(app)}`);
    const anomalies = (await this.anomalies(app)).map(({ app: _app, ...anomaly }) => anomaly);
    const flagged = new Set(anomalies.flatMap((anomaly) => anomaly.deliveryIds));
    const page = await this.operator.list({ app, includeEvents: true, order: 'desc', limit: TIMELINE_LIMIT });
    const deliveries = [...page.deliveries].reverse();
    const timeline = deliveries.map((delivery) => ({
      id: delivery.id,
      action: delivery.action,
      time: delivery.eventTime,
      timeMs: Number(delivery.eventNanos / 1_000_000n),
      lane: laneOf(delivery.action),
      label: delivery.event === undefined ? delivery.action : labelOf(delivery.event),
      anomaly: flagged.has(delivery.id),
      state: delivery.state,
    }));
    // The window may start mid-lifecycle (armed long ago): seed the fold with the auto-shutdown
    // events just before it, so the first band shows the phase the app was in, not `idle`.
    const before =
      page.next === undefined
        ? []
        : (
            await this.operator.list({
              app,
              action: 'app:budget:auto-shutdown:*',
              includeEvents: true,
              order: 'desc',
              after: page.next,
              limit: SEED_LIMIT,
            })
          ).deliveries;
    return { app: state, anomalies, timeline, phases: phaseSpans(deliveries, [...before].reverse()), now: new Date().toISOString() };
  }
}

export interface PhaseSpan {
  readonly phase: AutoShutdownPhase;
  readonly fromMs: number;
  readonly toMs: number | null;
}

type Folded = { event?: AnyWebhookEvent | undefined; eventNanos: bigint };

/**
 * The auto-shutdown phases over the timeline's span: the real fold's transitions, in event order.
 * `seed` (events before the span) sets the phase the span starts in.
 */
export function phaseSpans(deliveries: readonly Folded[], seed: readonly Folded[] = []): PhaseSpan[] {
  const first = deliveries[0];
  if (first === undefined) return [];
  const fold = createRackState();
  let app: string | undefined;
  for (const delivery of seed) if (delivery.event !== undefined) app = fold.apply(delivery.event).app ?? app;
  const seeded = app === undefined ? 'idle' : (fold.app(app)?.autoShutdown.phase ?? 'idle');
  const spans: PhaseSpan[] = [];
  let current: { phase: AutoShutdownPhase; fromMs: number } = { phase: seeded, fromMs: Number(first.eventNanos / 1_000_000n) };
  let applyingMs = current.fromMs;
  // Called synchronously from apply(): the transition happens at the event being applied.
  fold.onTransition((transition) => {
    if (transition.lifecycle !== 'auto-shutdown') return;
    spans.push({ ...current, toMs: applyingMs });
    current = { phase: transition.to, fromMs: applyingMs };
  });
  for (const delivery of deliveries) {
    if (delivery.event === undefined) continue;
    applyingMs = Number(delivery.eventNanos / 1_000_000n);
    fold.apply(delivery.event);
  }
  spans.push({ ...current, toMs: null });
  return spans.filter((span) => span.toMs === null || span.toMs > span.fromMs);
}
