/**
 * The inbox gauges' source: the inboxes that have a worker running in this process. A process that
 * only receives reads nothing; each worker process reads its table at most once per
 * {@link SNAPSHOT_MAX_AGE_MS}, however often the SDK collects (a collection within that time gets
 * the cached counts; concurrent ones share one query).
 */
import { settleWithin } from '../shared/timers.js';

export const SNAPSHOT_MAX_AGE_MS = 5_000;
const STATES = ['pending', 'running', 'done', 'dead', 'ignored', 'duplicate'] as const;

/** What `inbox.stats()` says, as far as the gauges need it: a count per state, and the oldest pending delivery's age. */
export type InboxCounts = { readonly [state in (typeof STATES)[number]]: number } & { readonly oldestPendingAgeMs: number | null };

interface Probe {
  readonly table: string;
  readonly read: () => Promise<InboxCounts>;
  /** Workers of this inbox running in this process. */
  workers: number;
  cached?: { readonly at: number; readonly counts: InboxCounts | undefined };
  reading?: Promise<InboxCounts | undefined> | undefined;
}

const probes = new Map<object, Probe>();
/** Tables whose last worker here stopped: live workers reads 0 for them, not nothing (a gap is not a zero). */
const idleTables = new Set<string>();

/**
 * A worker of `inbox` started: its table is read by the gauges until its last worker stops. The
 * returned function says it stopped. `rack_webhooks.workers.live` counts these workers; when
 * workers announce themselves in a heartbeat table, that count stays this process's own (summed
 * over processes, it is every live worker), and the table gives health() the rest.
 */
export function workerStarted(inbox: object, table: string, read: () => Promise<InboxCounts>): () => void {
  let probe = probes.get(inbox);
  if (probe === undefined) {
    probe = { table, read, workers: 0 };
    probes.set(inbox, probe);
    idleTables.delete(table);
  }
  probe.workers += 1;
  const started = probe;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    started.workers -= 1;
    if (started.workers === 0) {
      probes.delete(inbox);
      if (![...probes.values()].some((other) => other.table === table)) idleTables.add(table);
    }
  };
}

/**
 * How long a collection waits for the counts. On one connection (PGlite, a pg Client) the query
 * queues behind a running handler's transaction: a scrape then gets the last counts (or none)
 * instead of waiting for the handler, and the query, still running, refreshes them for the next.
 */
export const SNAPSHOT_WAIT_MS = 1_000;

function snapshot(probe: Probe, now: number): Promise<InboxCounts | undefined> {
  if (probe.cached !== undefined && now - probe.cached.at < SNAPSHOT_MAX_AGE_MS) return Promise.resolve(probe.cached.counts);
  probe.reading ??= probe
    .read()
    .then(
      (counts) => counts,
      // The database is away: no value rather than a stale one (the worker logs the outage).
      () => undefined,
    )
    .then((counts) => {
      probe.cached = { at: Date.now(), counts };
      probe.reading = undefined;
      return counts;
    });
  return settleWithin(probe.reading, SNAPSHOT_WAIT_MS, () => probe.cached?.counts);
}

export interface InboxObservations {
  deliveries(value: number, table: string, state: string): void;
  oldestPendingAge(seconds: number, table: string): void;
  liveWorkers(value: number, table: string): void;
}

/** One collection: every probed inbox's counts (cached), oldest pending age and workers. */
export async function observeInboxes(observe: InboxObservations): Promise<void> {
  const now = Date.now();
  for (const table of idleTables) observe.liveWorkers(0, table);
  await Promise.all(
    [...probes.values()].map(async (probe) => {
      observe.liveWorkers(probe.workers, probe.table);
      const counts = await snapshot(probe, now);
      if (counts === undefined) return;
      for (const state of STATES) observe.deliveries(counts[state], probe.table, state);
      observe.oldestPendingAge((counts.oldestPendingAgeMs ?? 0) / 1000, probe.table);
    }),
  );
}
