/**
 * What a reconcile compares and what it finds: the rack's records (read from its API), the events
 * the inbox holds, and the gaps between them. The comparison itself (./gaps.ts) is a pure
 * function of these, so it can run on a schedule or in a test without a rack or a database.
 */
import type { RackApp, RackBudget, RackBuild, RackRelease, RackShutdownState } from '../rack-api/types.js';

/** One list the rack does not page, as read: the newest `limit` records, and the route that gave them. */
export interface ReadList<T> {
  readonly route: string;
  readonly limit: number;
  readonly records: readonly T[];
  /** Whether the list reaches back past the window's start (or holds every record). */
  readonly covered: boolean;
}

/** Everything read of one app. */
export interface AppSnapshot {
  readonly app: RackApp;
  readonly builds: ReadList<RackBuild>;
  readonly releases: ReadList<RackRelease>;
  readonly budget: RackBudget;
  /** `null`: no lifecycle stored; `'corrupt'`: the route answered the rack's 500 for a corrupt stored value. */
  readonly shutdown: RackShutdownState | null | 'corrupt';
}

/** The rack as read for one reconcile. */
export interface RackSnapshot {
  readonly apps: readonly AppSnapshot[];
  /** When the reads started: the window's end. */
  readonly readAt: Date;
  /** Apps listed by `GET /apps` but deleted before their records were read (404). */
  readonly gone?: readonly string[];
}

/** One event the inbox holds (in any state), reduced to what matching needs. */
export interface HeldEvent {
  readonly action: string;
  readonly app: string | null;
  /** `data.id` (builds, releases, promotes), `data.build` (image imports) or `data.name` (app:create). */
  readonly id: string | null;
  readonly tickId: string | null;
  /** The event's own time, in milliseconds. */
  readonly eventMs: number;
}

/** The window judged: proofs from `since` to `until`, minus the grace before `until`. */
export interface ReconcileWindow {
  readonly since: Date;
  readonly until: Date;
  /** Proofs this recent are "cannot tell" (the event may still be on its way). */
  readonly graceMs: number;
}

/** The record and field that prove the rack sent (or tried to send) an event. */
export interface GapEvidence {
  /** The route read, such as `/apps/web/releases?limit=50`. */
  readonly route: string;
  /** The field that proves the send. */
  readonly field: string;
  /** Its value. */
  readonly value: string;
  /** When the proof says the send happened (the record's time, or the stamp). */
  readonly at: string;
}

/** An event the rack sent (or tried to send) that the inbox does not hold. */
export interface ReconcileGap {
  readonly action: string;
  readonly app: string;
  /** The build or release id; the `tick_id` for auto-shutdown events; the stamp's time for budget alerts. */
  readonly id: string;
  /** `success` or `error` for `build:create`; absent otherwise. */
  readonly status?: string;
  readonly evidence: GapEvidence;
}

/** Something the rack shows that the API cannot prove was (or was not) sent in the window. */
export interface CannotTell {
  readonly action: string;
  readonly app: string;
  readonly id: string;
  readonly reason: string;
}

/** A list that did not reach back to the window's start even at the largest `limit` asked. */
export interface Uncovered {
  readonly app: string;
  readonly route: string;
  readonly limit: number;
}

/** What a reconcile found. */
export interface ReconcileReport {
  readonly since: Date;
  readonly until: Date;
  readonly apps: readonly string[];
  /** Missing: proven sent, not held. */
  readonly gaps: readonly ReconcileGap[];
  readonly cannotTell: readonly CannotTell[];
  /** Lists that did not cover the window: gaps there could not be looked for. */
  readonly uncovered: readonly Uncovered[];
}
