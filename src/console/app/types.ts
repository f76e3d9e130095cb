// The console API's JSON, exactly as scratch/CONSOLE-API.md (the server/page contract) fixes it.
// A delivery, its attempts and the counts are the inbox's own JSON (src/inbox/json.ts, reached through
// src/inbox/facade/page.ts): imported as types, so a change there fails the page's type check
// instead of the page at run time.
import type { AttemptJson, DeliveryJson, DeliveryState, InboxStats } from '../../inbox/facade/page.js';

export type { DeliveryState } from '../../inbox/facade/page.js';
export const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'running', 'done', 'dead', 'ignored', 'duplicate'];

export type Stats = InboxStats;

export interface WorkerRow {
  id: string;
  host: string;
  pid: number;
  /** False once it missed 3 heartbeats (killed, crashed, cut off). */
  live: boolean;
  startedAt: string;
  lastSeenAt: string;
  running: number;
  concurrency: number;
}

export interface Overview {
  table: string;
  database: string;
  stats: Stats;
  /** Null on a schema from before heartbeats. */
  workers: { live: number; gone: number; list: WorkerRow[] } | null;
  /** Refusals in the last hour, most frequent code first; null on a schema from before they were recorded. */
  refusals: { total: number; byCode: { code: string; count: number }[] } | null;
  /** The incidents inbox.watch() keeps open, critical first; null on a schema without an incidents table. */
  alerts: OpenAlertRow[] | null;
  now: string;
}

export interface OpenAlertRow {
  rule: string;
  severity: 'critical' | 'warning';
  key: string;
  summary: string;
  since: string;
  openedAt: string;
}

export type Row = DeliveryJson;

export interface DeliveryPage {
  deliveries: Row[];
  next: string | null;
}

export interface Field {
  path: string;
  type: string;
  description?: string;
  value: string;
}

export interface Verification {
  signedAt: number;
  signedAtIso: string;
  receivedAt: string;
  skewSeconds: number;
  secretIndex: number;
}

export type AttemptOutcome = 'succeeded' | 'failed' | 'crashed' | 'abandoned';

export type Attempt = AttemptJson;

/** `Row & {...}` in the contract: the detail's `attempts` is the list, not the count. */
export interface DeliveryDetail extends Omit<Row, 'attempts'> {
  event: object | null;
  fields: Field[];
  verification: Verification;
  attempts: Attempt[];
}

export interface DeliveryResponse {
  delivery: DeliveryDetail;
}

export interface Moved {
  moved: number;
  /** Live workers when it moved; 0: nothing will run what moved until one starts. */
  liveWorkers: number | null;
}

export type Phase = 'idle' | 'armed' | 'shut-down' | 'shutdown-failed' | 'restored';

export interface AppSummary {
  app: string;
  phase: Phase;
  expectedShutdownAt?: string;
  breaker: 'closed' | 'tripped';
  updatedAt: string;
  anomalies: number;
  events: number;
  /** Dead deliveries of this app. */
  dead: number;
  /** Pending again after a failed attempt. */
  failing: number;
  /** Pending or running. */
  pending: number;
}

export interface PhaseEnd {
  phase: Phase;
  by: string;
  cancelReason?: string;
  at: string;
  tickId?: string;
  actor?: string;
}

export interface AppState {
  app: string;
  autoShutdown: {
    phase: Phase;
    tickId?: string;
    since?: string;
    scheduledAt?: string;
    expectedShutdownAt?: string;
    actor?: string;
    previous?: PhaseEnd;
    lastFlapSuppressed?: { at: string; tickId?: string };
  };
  breaker: { state: 'closed' | 'tripped'; since?: string; by?: string };
  budget: {
    capUsd?: string;
    atCapAction?: string;
    alertThresholdPercent?: string;
    setAt?: string;
    setBy?: string;
    lastThresholdAt?: string;
    lastCapAt?: string;
    lastResetAt?: string;
    clearedAt?: string;
  };
  scaleOverrides: Record<string, { state: string; at: string; actor?: string }>;
  triggersOverrides: Record<string, { state?: string; crd?: string; at: string; thresholds: Record<string, string> }>;
  promotes: Record<
    string,
    {
      releaseId: string;
      startedAt?: string;
      actor?: string;
      outcome?: 'completed' | 'errored' | 'cancelled';
      endedAt?: string;
      message?: string;
    }
  >;
  lastBuild?: { id?: string; action: string; status: string; at: string; message?: string };
  lastRelease?: { id?: string; at: string };
  updatedAt: string;
}

export interface Anomaly {
  kind: string;
  id: string;
  message: string;
  deliveryIds: string[];
}

export type Lane = 'auto-shutdown' | 'budget' | 'promote' | 'build' | 'scale' | 'other';
export const LANES: readonly Lane[] = ['auto-shutdown', 'budget', 'promote', 'build', 'scale', 'other'];

export interface TimelineEvent {
  id: string;
  action: string;
  /** The event time as sent. */
  time: string;
  /** Epoch ms, for the x position. */
  timeMs: number;
  lane: Lane;
  label: string;
  anomaly: boolean;
  state: DeliveryState;
}

export interface PhaseSpan {
  phase: Phase;
  fromMs: number;
  /** null: still the current phase. */
  toMs: number | null;
}

export interface AppResponse {
  app: AppState;
  anomalies: Anomaly[];
  timeline: TimelineEvent[];
  phases: PhaseSpan[];
  now: string;
}

/** `/api/history?span=`: the inbox's `readHistory` (src/inbox/operate/history.ts) as JSON. */
export interface HistoryHour {
  hour: string;
  accepted: number;
  duplicate: number;
  /** null: the schema has no refusals table. */
  refused: number | null;
  retried: number;
  dead: number;
  processed: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

export interface HistoryResponse {
  span: 'day' | 'week';
  hours: HistoryHour[];
  refusalsRecorded: boolean;
  /** null: the schema has no workers table. */
  liveWorkers: number | null;
}

export interface ApiErrorBody {
  error: { code: string; message: string };
}

/** GET /api/gaps: a log gap as inbox.watch()'s logGaps rule keeps it (src/inbox/health/log-gaps.ts), as JSON. */
export interface LogGapRow {
  key: string;
  severity: 'critical' | 'warning';
  summary: string;
  app: string;
  id: string;
  missing: string;
  evidence: { deliveryId: string; action: string; eventTime: string; receivedAt: string }[];
  since: string;
  openedAt: string;
}

/** GET /api/gaps: a gap the scheduled reconcile keeps open (src/inbox/health/reconcile-gaps.ts), as JSON. */
export interface ReconcileGapRow {
  key: string;
  summary: string;
  action: string;
  app: string;
  id: string;
  status: string | null;
  evidence: { route: string; field: string; value: string; at: string };
  /** The delivery reconcile stored it as (`--record`); null when it was not recorded. */
  recorded: { id: string } | null;
  since: string;
  openedAt: string;
}

export interface Gaps {
  /** Null on a schema without an incidents table (as `reconcile`). */
  logGaps: LogGapRow[] | null;
  reconcile: {
    gaps: ReconcileGapRow[];
    problems: { rule: 'reconcile_failed' | 'reconcile_token'; summary: string; code: string | null; since: string }[];
  } | null;
  now: string;
}
