/**
 * What a reconcile compares and what it finds: the rack's records (read from its API), the events
 * the inbox holds, and the gaps between them. The comparison itself (./gaps.ts) is a pure
 * function of these, so it can run on a schedule or in a test without a rack or a database.
 */
import type { RackApp, RackBudget, RackBuild, RackRelease, RackShutdownState } from '../rack-api/types.js';

/** One list the rack does not page, as read: the newest `limit` records, and the route that gave them. */
export interface ReadList<T> {
  /** The route of the last read, `limit` included, such as `/apps/web/builds?limit=200`. */
  readonly route: string;
  /** The `limit` of the last read: the largest asked for this list. */
  readonly limit: number;
  /** The records that read returned, newest first (builds by `started`, releases by `created`). */
  readonly records: readonly T[];
  /** Whether the list reaches back past the window's start (or holds every record). */
  readonly covered: boolean;
}

/** Everything read of one app. */
export interface AppSnapshot {
  /** The app as `GET /apps` listed it. */
  readonly app: RackApp;
  /** Its newest builds, read back past the window's start by the longest build expected. */
  readonly builds: ReadList<RackBuild>;
  /** Its newest releases, read back past the window's start. */
  readonly releases: ReadList<RackRelease>;
  /** Its budget; `config` and `state` both `null` when it has none. */
  readonly budget: RackBudget;
  /** `null`: no lifecycle stored; `'corrupt'`: the route answered the rack's 500 for a corrupt stored value. */
  readonly shutdown: RackShutdownState | null | 'corrupt';
}

/** The rack as read for one reconcile. */
export interface RackSnapshot {
  /** One snapshot per app read (those deleted while read are in `gone` instead). */
  readonly apps: readonly AppSnapshot[];
  /** When the reads started: the window's end. */
  readonly readAt: Date;
  /** Apps listed by `GET /apps` but deleted before their records were read (404). */
  readonly gone?: readonly string[];
}

/** One delivery as {@link ReconcileInbox} lists it: the fields a reconcile matches on (a `StoredDelivery` is one). */
export interface HeldDelivery {
  /** The event's `action`. */
  readonly action: string;
  /** `data.app`, when the event has one. */
  readonly app: string | null;
  /** `data.tick_id`, when the event has one. */
  readonly tickId: string | null;
  /** The event's own time, in nanoseconds since the epoch. */
  readonly eventNanos: bigint;
  /** The parsed event (asked for with `includeEvents`). */
  readonly event?:
    | {
        /** The event's `data`. */
        readonly data?: unknown;
      }
    | undefined;
}

/** One page of {@link ReconcileInbox.list}. */
export interface HeldPage {
  /** The page's deliveries. */
  readonly deliveries: readonly HeldDelivery[];
  /** Pass as `after` for the next page; `undefined` on the last. */
  readonly next: string | undefined;
}

/**
 * What a reconcile reads of an inbox: its `list` (an `Inbox` of rack-webhooks/inbox is one). Said
 * here rather than imported, so that the inbox's watcher can run a reconcile on a schedule
 * without the two folders importing each other.
 */
export interface ReconcileInbox {
  /** One page of deliveries, as `inbox.list()` reads it. */
  list(options: { action: string[]; from?: Date; limit: number; includeEvents: boolean; after?: string }): Promise<HeldPage>;
}

/** One event the inbox holds (in any state), reduced to what matching needs. */
export interface HeldEvent {
  /** The event's `action`, such as `release:create`. */
  readonly action: string;
  /** `data.app` (`data.name` for `app:create`); `null` when the event has none. */
  readonly app: string | null;
  /** `data.id` (builds, releases, promotes), `data.build` (image imports) or `data.name` (app:create). */
  readonly id: string | null;
  /** `data.tick_id` (auto-shutdown events); `null` for events without one. */
  readonly tickId: string | null;
  /** The event's own time, in milliseconds. */
  readonly eventMs: number;
}

/** The window judged: proofs from `since` to `until`, minus the grace before `until`. */
export interface ReconcileWindow {
  /** The window's start: proofs older than this are not judged. */
  readonly since: Date;
  /** The window's end: when the rack's reads started. */
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
  /** The action of the missing event, such as `release:create` or `app:budget:auto-shutdown:fired`. */
  readonly action: string;
  /** The app the rack sent it for. */
  readonly app: string;
  /** The build or release id; the `tick_id` for auto-shutdown events; the stamp's time for budget alerts. */
  readonly id: string;
  /** `success` or `error` for `build:create`; absent otherwise. */
  readonly status?: string;
  /** The record and field that prove the rack sent (or tried to send) it. */
  readonly evidence: GapEvidence;
  /**
   * The event's `data` as far as the rack's records give it (never a release's `env`): what a
   * delivery recorded with `record: true` carries. Absent on gaps built elsewhere.
   */
  readonly data?: Readonly<Record<string, string>>;
  /**
   * With `record: true`: the reconciled delivery that now stands for the event (stored by this
   * reconcile, or by another one before it); absent when the event was not recorded (a budget
   * alert, which has no key a late real arrival could be matched on; or a real delivery that
   * arrived while the reconcile ran).
   */
  readonly recorded?: {
    /** The inbox row's id (`inbox show <id>`). */
    readonly id: string;
  };
}

/** Something the rack shows that the API cannot prove was (or was not) sent in the window. */
export interface CannotTell {
  /** The action in doubt; a pattern (`app:budget:auto-shutdown:*`, or `*` for a deleted app) when it is a whole family. */
  readonly action: string;
  /** The app concerned. */
  readonly app: string;
  /** What would match it: a build, release or tick id, the app's name (`app:create`), a stamp's time; `""` when nothing can. */
  readonly id: string;
  /** Why it cannot be told, in one line, such as "the build may be an import, which sends no build:create". */
  readonly reason: string;
}

/** A list that did not reach back to the window's start even at the largest `limit` asked. */
export interface Uncovered {
  /** The app whose list it is. */
  readonly app: string;
  /** The route of the last read, such as `/apps/web/releases?limit=1000`. */
  readonly route: string;
  /** The largest `limit` asked: raise `maxLimit` of {@link reconcile} past it to cover the window. */
  readonly limit: number;
}

/** What a reconcile found. */
export interface ReconcileReport {
  /** The window's start, as asked (by default 24 hours before the call). */
  readonly since: Date;
  /** The window's end: when the rack's reads started. */
  readonly until: Date;
  /** The names of the apps read and judged. */
  readonly apps: readonly string[];
  /** Missing: proven sent, not held. */
  readonly gaps: readonly ReconcileGap[];
  /** What the rack shows but cannot prove was, or was not, sent in the window: check these by hand. */
  readonly cannotTell: readonly CannotTell[];
  /** Lists that did not cover the window: gaps there could not be looked for. */
  readonly uncovered: readonly Uncovered[];
}
